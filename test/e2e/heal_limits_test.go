package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/platformsim"
)

// TestHeal_LocalMaxInFlightHoldsAgainstADocumentAskingForMore runs the
// built actor with KUBEHZ_HEAL_MAX_IN_FLIGHT=3, the value deploy/actor's
// actor.env ships (TestActorEnv_ShipsTheHealingLimitsTheREADMESays pins
// it), against a document asking for maxUnhealthy 1000, the contract's
// ceiling: four dead workers are a storm at 3, so nothing is deleted, and
// the platform is told the local limit replaced what it asked. The control: one worker recovers,
// three remain dead, and the same actor deletes exactly those three. The
// deaths are dated 10 minutes back (the kubelets stop, and the Nodes are
// written Unknown as kube-controller-manager would have written them then);
// the recovery is the kubelet starting again.
func TestHeal_LocalMaxInFlightHoldsAgainstADocumentAskingForMore(t *testing.T) {
	start := time.Now()
	world, _ := machineWorld(t)
	readyPool(t, world, "pool-a", 4, clustersim.PoolOptions{})
	dead := poolMachines(t, world, "pool-a")
	for _, m := range dead {
		if err := world.SetNodeCondition(ctxT(t), m.Node, corev1.ConditionUnknown, time.Now().Add(-10*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	sim := startSim(t, platformsim.Options{})
	doc := desiredDoc{Revision: 8, Execution: map[string]any{"healing": true},
		Healing: map[string]any{"enabled": true, "maxUnhealthy": 1000, "unhealthyAfterSeconds": 60,
			"nodeStartupTimeoutSeconds": 60, "cooldownSeconds": 0},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 4}}}
	if err := sim.SetDesired(doc, `"8-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-limits", "KUBEHZ_HEAL_MAX_IN_FLIGHT=3")

	const storm = "unhealthy count 4 exceeds maxUnhealthy 3 — refusing (possible outage)"
	b := waitBeat(t, sim, func(b platformsim.Beat) bool { return len(actionsOf(b)) == 5 })
	policy, ok := findAction(actionsOf(b), "heal", "healing policy")
	if !ok || policy.Status != "failed" || !strings.Contains(policy.Detail, "maxUnhealthy 3 (asked 1000)") {
		t.Errorf("healing policy report %+v, want failed, saying maxUnhealthy 3 was used where 1000 was asked", policy)
	}
	for _, m := range dead {
		if a, ok := findAction(actionsOf(b), "heal", m.Name); !ok || a.Status != "failed" || a.Detail != storm {
			t.Errorf("%s: report %+v, want failed with exactly %q", m.Name, a, storm)
		}
	}
	// Three more polls, each a healing pass, must still delete nothing.
	seq := sim.Seq()
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool {
			return r.Endpoint == platformsim.EndpointDesired && r.Seq > seq
		})
		cancel()
		if err != nil {
			t.Fatalf("poll %d after the storm report: %v", i+1, err)
		}
		seq = sim.Seq()
	}
	if got := deletes(t, start); len(got) != 0 {
		t.Fatalf("past the local limit the actor deleted %v", got)
	}

	if err := world.SetNodeCondition(ctxT(t), dead[0].Node, corev1.ConditionTrue, time.Now()); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range dead[1:] {
		want = append(want, "machines kube-system/"+m.Name)
	}
	slices.Sort(want)
	waitFor(t, "three dead workers, within the limit, are deleted", time.Minute, func() bool {
		return slices.Equal(deletes(t, start), want)
	})
}
