package e2e

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestFaults_HostilePlatformNeverCausesAnAct answers both endpoints, at the
// same time, with what a broken or hostile platform (or something in front
// of it) could send: a hang, a trickle, an oversized body, malformed JSON,
// a wrong Content-Type. Behind each answer stands a real reason to act: a
// desired document that scales pool-0, and a verdict for the inventory's
// status. While the fault lasts neither is acted on and a stuck exchange is
// abandoned (by the 15 s request bound, which a unit test times) and tried
// again; once it clears, both are acted on, which shows each stimulus was
// live.
func TestFaults_HostilePlatformNeverCausesAnAct(t *testing.T) {
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-0", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	installInventory(t)

	sim := startSim(t, platformsim.Options{})
	doc := func(rev, replicas int64) desiredDoc {
		return desiredDoc{Revision: rev, Execution: map[string]any{"scaling": true},
			WorkerPools: []desiredPool{{Name: "pool-0", MachineType: "cpx31", DesiredReplicas: replicas}}}
	}
	if err := sim.SetDesired(doc(100, 1), `"100-100"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-hostile")
	waitBeat(t, sim, func(b platformsim.Beat) bool { _, ok := b.Payload["inventory"]; return ok })

	// Each fault's body, where it has one, carries its own reason to act:
	// the oversized answers are a document that scales pool-0 and a verdict
	// of 2 MiB of addons, the truncated ones a document and a verdict cut
	// before their closing brace.
	const (
		truncatedDoc     = `{"revision":900,"execution":{"scaling":true},"workerPools":[{"name":"pool-0","desiredReplicas":9}]`
		truncatedVerdict = `{"availableUpdates":[{"name":"cilium","current":"1.16.1","latest":"9.9.9"}]`
	)
	both := func(f platformsim.Fault) [2]platformsim.Fault { return [2]platformsim.Fault{f, f} }
	faults := []struct {
		name string
		// The faults of /desired and of the heartbeat, in that order. A
		// hung or trickling exchange never completes: the client's 15 s
		// bound is what ends it.
		faults [2]platformsim.Fault
	}{
		{name: "hung", faults: both(platformsim.Fault{Hang: true})},
		{name: "trickling", faults: both(platformsim.Fault{Trickle: 200 * time.Millisecond})},
		{name: "oversized", faults: both(platformsim.Fault{OversizeBytes: 2 << 20})},
		{name: "malformed JSON", faults: [2]platformsim.Fault{{Body: []byte(truncatedDoc)}, {Body: []byte(truncatedVerdict)}}},
		{name: "wrong content type", faults: both(platformsim.Fault{ContentType: "text/html; charset=utf-8"})},
	}
	replicas := int64(1)
	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			replicas++
			latest := fmt.Sprintf("1.17.%d", i)
			before, _, _ := unstructured.NestedSlice(getInventory(t).Object, "status", "availableUpdates")
			f.faults[0].Endpoint, f.faults[1].Endpoint = platformsim.EndpointDesired, platformsim.EndpointHeartbeat
			sim.SetFault(f.faults[0])
			sim.SetFault(f.faults[1])
			// Behind the fault, the platform's real answers would act too.
			sim.SetAvailableUpdates([]platformsim.AvailableUpdate{{Name: "cilium", Current: "1.16.1", Latest: latest}})
			if err := sim.SetDesired(doc(int64(101+i), replicas), fmt.Sprintf(`"%d-100"`, 101+i)); err != nil {
				t.Fatal(err)
			}
			seq := sim.Seq()
			// Two faulted exchanges on each endpoint: the first ended (a
			// stuck one only by the agent's own request bound, which the
			// server never lets go of), and the agent tried again. The bound
			// itself, 15 s, is pinned on a fake clock by
			// TestTimeout_HangingServerIsCutOffAtFifteenSeconds.
			for _, ep := range []platformsim.Endpoint{platformsim.EndpointDesired, platformsim.EndpointHeartbeat} {
				faultedPair(t, sim, seq, ep)
			}
			if got := replicasOf(t, mds, "pool-0"); got != replicas-1 {
				t.Errorf("pool-0 at %d during the fault, want %d untouched", got, replicas-1)
			}
			// No verdict of any faulted answer, nor the one behind it, was
			// written: the status is as it was.
			during, _, _ := unstructured.NestedSlice(getInventory(t).Object, "status", "availableUpdates")
			if !reflect.DeepEqual(during, before) {
				t.Errorf("the inventory status changed during the fault:\n before %v\n during %v", before, during)
			}

			sim.ClearFault()
			kube.WaitUntil(t, "the control: pool-0 scaled once the fault cleared", func() bool { return replicasOf(t, mds, "pool-0") == replicas })
			waitInventory(t, "the control: the verdict "+latest, func(u *unstructured.Unstructured) bool { return hasLatest(u, latest) })
		})
	}
}

// faultedPair waits for two faulted requests to ep after seq, the second
// showing that the agent tried again, and for the simulator to be done with
// the first.
func faultedPair(t *testing.T, sim *platformsim.Server, seq uint64, ep platformsim.Endpoint) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var got []uint64
	for len(got) < 2 {
		r, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool {
			return r.Seq > seq && r.Endpoint == ep && r.Faulted
		})
		if err != nil {
			t.Fatalf("%s: %d faulted requests within 45 s, want 2: %v", ep, len(got), err)
		}
		seq = r.Seq
		got = append(got, r.Seq)
	}
	kube.WaitUntil(t, fmt.Sprintf("%s: the simulator done with request %d", ep, got[0]), func() bool {
		for _, r := range sim.Requests() {
			if r.Seq == got[0] && !r.Ended.IsZero() {
				return true
			}
		}
		return false
	})
}

func hasLatest(u *unstructured.Unstructured, latest string) bool {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "availableUpdates")
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["latest"] == latest {
			return true
		}
	}
	return false
}
