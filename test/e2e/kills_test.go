package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestFaults_TwentyLeaderKillsNeverOverlapTerms runs three actor replicas
// while the platform keeps asking for a new pool size, and kills the leader
// twenty times at random moments, by SIGKILL (no release) or SIGTERM
// (release), restarting a replica each time as the kubelet would. From the
// apiserver's audit log, no two processes' writes interleave, and every
// revision ends done in the reports the observer would fold.
func TestFaults_TwentyLeaderKillsNeverOverlapTerms(t *testing.T) {
	const kills = 20
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("KUBEHZ_KILL_SEED"), 10, 64); err == nil {
		seed = s // replay a failed run
	}
	t.Logf("seed %d (KUBEHZ_KILL_SEED=%d replays this run's choices)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	start := time.Now()
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-a", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	revision, replicas := int64(200), int64(1)
	next := func() {
		revision++
		replicas = 1 + (replicas % 3) // 2, 3, 1, 2, …
		if err := sim.SetDesired(desiredDoc{Revision: revision, Execution: map[string]any{"scaling": true},
			WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: replicas}}}, fmt.Sprintf(`"%d-100"`, revision)); err != nil {
			t.Fatal(err)
		}
	}
	next()
	procs := map[string]*kube.Process{}
	started := 0
	spawn := func() {
		started++
		pod := fmt.Sprintf("actor-k%02d", started)
		procs[pod] = startActor(t, sim, pod)
	}
	for range 3 {
		spawn()
	}
	done := func() {
		t.Helper()
		kube.WaitUntil(t, fmt.Sprintf("revision %d done at %d replicas", revision, replicas), func() bool {
			return replicasOf(t, mds, "pool-a") == replicas && reportsDone(t, revision)
		})
	}
	done()
	sigkills := 0
	for k := range kills {
		next()
		// Somewhere between before the leader sees the revision and after it
		// has acted on it.
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		holder := leaseHolder(t)
		pod, _, _ := strings.Cut(holder, "_")
		leader, ok := procs[pod]
		if !ok {
			t.Fatalf("kill %d: the lease holder %q is none of the replicas", k, holder)
		}
		if rng.IntN(10) < 3 {
			sigkills++
			leader.Kill()
		} else {
			_ = syscall.Kill(leader.Pid(), syscall.SIGTERM)
			if code, err := leader.Wait(20 * time.Second); err != nil || code != 0 {
				t.Fatalf("kill %d: %s did not stop cleanly on SIGTERM (%d, %v)", k, pod, code, err)
			}
			leader.Ended()
		}
		delete(procs, pod)
		spawn()
		kube.WaitUntil(t, fmt.Sprintf("kill %d: a new leader", k), func() bool {
			h := leaseHolder(t)
			return h != "" && h != holder
		})
		done()
	}
	t.Logf("%d kills (%d SIGKILL), %d revisions, all done", kills, sigkills, revision-200)

	type term struct {
		process     string
		first, last time.Time
	}
	terms := map[string]*term{}
	for _, e := range actorRequests(t, start) {
		if !mutating[e.Verb] || e.Resource() == "leases" || e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		tm, ok := terms[e.Process()]
		if !ok {
			tm = &term{process: e.Process(), first: e.RequestReceived}
			terms[e.Process()] = tm
		}
		tm.last = e.RequestReceived
	}
	var ordered []*term
	for _, tm := range terms {
		ordered = append(ordered, tm)
	}
	slices.SortFunc(ordered, func(a, b *term) int { return a.first.Compare(b.first) })
	// Every leader wrote (its reports, at the least, which done() waited
	// for), so the overlap check has kills+1 terms to compare: fewer would
	// mean the audit records no longer tell the processes apart.
	if len(ordered) < kills+1 {
		t.Fatalf("%d terms wrote, want at least %d: the audit log's processes cannot be told apart", len(ordered), kills+1)
	}
	for i := 1; i < len(ordered); i++ {
		if prev, cur := ordered[i-1], ordered[i]; !prev.last.Before(cur.first) {
			t.Errorf("terms overlap: %s wrote until %s, %s from %s", prev.process, prev.last.Format(time.StampMilli),
				cur.process, cur.first.Format(time.StampMilli))
		}
	}
	t.Logf("%d leadership terms wrote, none overlapping", len(ordered))
}

// reportsDone reads the hand-off ConfigMap as the observer would: written
// by the Lease's current holder, the document answers rev and every report
// in it is done. An earlier test's document, or a deposed leader's, never
// counts. The document is decoded here with encoding/json, not by the
// product's own decoder: a decoder that misread the document would
// otherwise agree with the encoder that wrote it.
func reportsDone(t *testing.T, rev int64) bool {
	t.Helper()
	cm, err := suite.env.Client.CoreV1().ConfigMaps("kubehz-system").Get(ctxT(t), "kubehz-actions", metav1.GetOptions{})
	if err != nil {
		return false
	}
	var doc struct {
		Revision int64  `json:"revision"`
		Holder   string `json:"holder"`
		Actions  []struct {
			Type, Target, Status string
			Revision             int64
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(cm.Data["actions.json"]), &doc); err != nil {
		return false
	}
	if doc.Holder == "" || doc.Holder != leaseHolder(t) || doc.Revision != rev || len(doc.Actions) == 0 {
		return false
	}
	for _, a := range doc.Actions {
		if a.Status != "done" || a.Revision != rev {
			return false
		}
	}
	return true
}
