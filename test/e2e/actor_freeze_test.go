package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestActor_FrozenLeader freezes the leading actor (SIGSTOP) in the middle
// of a pass that has writes left to make, then proves three things: its
// liveness probe fails, the standby takes the lease once it lapses and
// finishes the revision, and when the frozen process is thawed (SIGCONT)
// after the takeover, it starts no request of its term and no write of it
// but an Event lands: what reaches the apiserver is at most what was
// already past its term check when it froze, and the apiserver refuses its
// writes.
func TestActor_FrozenLeader(t *testing.T) {
	world, mds := machineWorld(t)
	const pools = 12
	var names []string
	for i := range pools {
		name := fmt.Sprintf("pool-%02d", i)
		names = append(names, name)
		if err := world.CreatePool(ctxT(t), name, 1, clustersim.PoolOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(rev, replicas int64) desiredDoc {
		d := desiredDoc{Revision: rev, Execution: map[string]any{"scaling": true}}
		for _, n := range names {
			d.WorkerPools = append(d.WorkerPools, desiredPool{Name: n, DesiredReplicas: replicas})
		}
		return d
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(doc(40, 2), `"40-100"`); err != nil {
		t.Fatal(err)
	}
	alive := map[string]string{}
	procs := map[string]*kube.Process{}
	for _, pod := range []string{"actor-frz-a", "actor-frz-b"} {
		alive[pod] = filepath.Join(t.TempDir(), "alive")
		procs[pod] = startActor(t, sim, pod, "KUBEHZ_LIVENESS_FILE="+alive[pod])
	}
	allAt := func(n int64) func() bool {
		return func() bool {
			for _, name := range names {
				if replicasOf(t, mds, name) != n {
					return false
				}
			}
			return true
		}
	}
	kube.WaitUntil(t, "every pool scaled to 2", allAt(2))
	leaderPod := strings.SplitN(leaseHolder(t), "_", 2)[0]
	standbyPod := "actor-frz-a"
	if leaderPod == standbyPod {
		standbyPod = "actor-frz-b"
	}
	leader := procs[leaderPod]

	// A new revision with a write per pool; the freeze lands as soon as the
	// first patch shows, with most of the pass still to write. The patch is
	// seen on a watch opened before the revision is served, not by polling
	// every 100 ms: a pass of twelve takes well under a second, and a
	// stalled poll on a loaded machine could come after it had ended.
	list, err := mds.List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := mds.Watch(ctxT(t), metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.SetDesired(doc(41, 3), `"41-100"`); err != nil {
		w.Stop()
		t.Fatal(err)
	}
	awaitFirstPatch(t, w, 3)
	w.Stop()
	if err := leader.Freeze(); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			_ = leader.Thaw()
		}
	})

	kube.WaitUntil(t, "the standby holds the lease", func() bool { return strings.HasPrefix(leaseHolder(t), standbyPod+"_") })
	// The takeover instant as the standby wrote it into the Lease.
	tookOver := time.Now()
	if lease, err := suite.env.Client.CoordinationV1().Leases("kubehz-system").Get(ctxT(t), "kubehz-actor", metav1.GetOptions{}); err == nil && lease.Spec.AcquireTime != nil {
		tookOver = lease.Spec.AcquireTime.Time
	}
	t.Logf("standby took the lease %s after the freeze", tookOver.Sub(frozen).Truncate(time.Millisecond))
	kube.WaitUntil(t, "the standby finishes revision 41", allAt(3))

	// The frozen leader's probe: it fails once a minute passes without a
	// step, while the standby's passes.
	deadline := time.Now().Add(90 * time.Second)
	for probeActor(t, alive[leaderPod]) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the frozen leader's probe still passes %s after the freeze", time.Since(frozen))
		}
		time.Sleep(time.Second)
	}
	t.Logf("the frozen leader's probe failed %s after the freeze", time.Since(frozen).Truncate(time.Second))
	if err := probeActor(t, alive[standbyPod]); err != nil {
		t.Errorf("the leading standby's probe fails: %v", err)
	}

	if err := leader.Thaw(); err != nil {
		t.Fatal(err)
	}
	thawed = true
	thaw := time.Now()
	code, err := leader.Wait(30 * time.Second)
	if err != nil {
		t.Fatalf("the thawed leader did not exit after losing its lease: %v", err)
	}
	leader.Ended()
	if code != 1 {
		t.Errorf("thawed leader exit code %d, want 1 (lost lease)", code)
	}

	// The stimulus was live: the freeze left pools for the standby to scale.
	patched, refused := map[string]bool{}, 0
	for _, e := range actorRequests(t, frozen) {
		if !strings.HasPrefix(e.Process(), standbyPod+"_") || e.Verb != "patch" || e.Resource() != "machinedeployments" {
			continue
		}
		if code := e.Code(); code >= 200 && code < 300 {
			patched[e.ObjectRef.Name] = true
		} else {
			refused++
		}
	}
	if len(patched) == 0 {
		t.Errorf("the standby patched nothing after the freeze: no write was due when the leader froze")
	}
	t.Logf("pools the standby patched after the freeze: %d of %d (and %d patches refused)", len(patched), pools, refused)

	// A request the leader sent just before the signal may still arrive a
	// moment after it, inside its own term. From the takeover on, the
	// deposed leader starts no request, read or write: its term ended 10 s
	// after its last renewal was sent, by its own monotonic clock, which
	// ran on while it was frozen, and every request is checked against the
	// term just before it is handed to the connection. What no process can
	// rule out is a request that had passed that check when SIGSTOP landed
	// and reaches the apiserver after the thaw: at most one per goroutine
	// that sends (the pass, the elector, the kill switch and the three
	// caches' informers). Each write among them carries a precondition the
	// standby's own writes of revision 41 have since broken, so it is
	// refused, except an Event, which has none and only records what
	// landed in the old term.
	late := deposedRequests(t, leaderPod, tookOver, thaw)
	if len(late) > 6 {
		t.Errorf("%d requests of the deposed leader reached the apiserver after the takeover, more than the 6 its sending goroutines can have had past the term check when it froze", len(late))
	}
	for _, e := range late {
		if e.landedWrite() {
			t.Errorf("the deposed leader's write landed after the takeover: %s", e)
		}
	}
	t.Logf("requests of the deposed leader after the takeover: %d", len(late))
}

// lateRequest is a request of a deposed leader that reached the apiserver
// after its successor's takeover.
type lateRequest struct {
	kube.AuditEvent
	afterThaw time.Duration
}

// landedWrite reports a write the apiserver carried out, an Event aside; a
// write whose record has no answer counts as landed.
func (e lateRequest) landedWrite() bool {
	if !mutating[e.Verb] || (e.Verb == "create" && e.Resource() == "events") {
		return false
	}
	return e.Code() < 300
}

func (e lateRequest) String() string {
	name := ""
	if e.ObjectRef != nil {
		name = e.ObjectRef.Name
	}
	return fmt.Sprintf("%s %s/%s at %s (%s after the thaw), answered %d",
		e.Verb, e.Resource(), name, e.RequestReceived.Format(time.StampMilli), e.afterThaw, e.Code())
}

// deposedRequests are pod's requests that reached the apiserver from the
// takeover on, each logged.
func deposedRequests(t *testing.T, pod string, tookOver, thaw time.Time) []lateRequest {
	t.Helper()
	var late []lateRequest
	for _, e := range actorRequests(t, tookOver) {
		if strings.HasPrefix(e.Process(), pod+"_") {
			r := lateRequest{AuditEvent: e, afterThaw: e.RequestReceived.Sub(thaw)}
			t.Logf("the deposed leader's %s", r)
			late = append(late, r)
		}
	}
	return late
}

// awaitFirstPatch returns once w shows a MachineDeployment at replicas.
func awaitFirstPatch(t *testing.T, w watch.Interface, replicas int64) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the MachineDeployment watch ended before the first patch")
			}
			if ev.Type == watch.Error {
				t.Fatalf("the MachineDeployment watch failed: %v", apierrors.FromObject(ev.Object))
			}
			if md, isMD := ev.Object.(*unstructured.Unstructured); isMD {
				if n, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas"); n == replicas {
					return
				}
			}
		case <-timeout:
			t.Fatalf("no MachineDeployment reached %d replicas within 60s", replicas)
		}
	}
}

func leaseHolder(t *testing.T) string {
	t.Helper()
	lease, err := suite.env.Client.CoordinationV1().Leases("kubehz-system").Get(ctxT(t), "kubehz-actor", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// probeActor runs `actor probe` as the kubelet's exec probe would.
func probeActor(t *testing.T, aliveFile string) error {
	t.Helper()
	cmd := exec.Command(suite.actorBin, "probe")
	cmd.Env = []string{"KUBEHZ_LIVENESS_FILE=" + aliveFile}
	out, err := cmd.CombinedOutput()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		return fmt.Errorf("%s", strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatal(err)
	}
	return nil
}
