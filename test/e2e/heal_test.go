package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// healPolicy is the healing block of a desired document; windows in
// seconds. The contract floors both detection windows at 60 s.
func healPolicy(maxUnhealthy int) map[string]any {
	return map[string]any{"enabled": true, "maxUnhealthy": maxUnhealthy,
		"unhealthyAfterSeconds": 60, "nodeStartupTimeoutSeconds": 60, "cooldownSeconds": 0}
}

// waitFor polls ok every 200 ms until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting: %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// latestAction is the action on the newest beat, if it carries one.
func latestAction(sim *platformsim.Server, typ, target string) (action, bool) {
	beats := sim.Beats()
	if len(beats) == 0 {
		return action{}, false
	}
	return findAction(actionsOf(beats[len(beats)-1]), typ, target)
}

func poolMachines(t *testing.T, world *clustersim.World, pool string) []clustersim.MachineInfo {
	t.Helper()
	ms, err := world.Machines(ctxT(t), pool)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// readyReplacement reports whether pool has want joined, Ready, live
// Machines and none of them is gone.
func readyReplacement(t *testing.T, world *clustersim.World, pool string, want int, gone string) bool {
	n := 0
	for _, m := range poolMachines(t, world, pool) {
		if m.Name == gone {
			return false
		}
		if !m.Deleting && m.Ready {
			n++
		}
	}
	return n == want
}

// readyPool creates pool with n workers and waits until all n are Ready.
func readyPool(t *testing.T, world *clustersim.World, pool string, n int64, opts clustersim.PoolOptions) {
	t.Helper()
	if err := world.CreatePool(ctxT(t), pool, n, opts); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("%s has %d Ready workers", pool, n), time.Minute,
		func() bool { return readyReplacement(t, world, pool, int(n), "") })
}

// placeStuckPods puts n pods on node in a namespace of the test's own and
// force-deletes whatever is left of them when the test ends.
func placePods(t *testing.T, world *clustersim.World, node, ns string, n int) []string {
	t.Helper()
	names, err := world.PlacePods(ctxT(t), node, n, ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		grace := int64(0)
		pods := suite.env.Client.CoreV1().Pods(ns)
		for _, name := range names {
			_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		}
	})
	return names
}

// deletes lists what the actor deleted since start, as "resource ns/name".
func deletes(t *testing.T, start time.Time) []string {
	var out []string
	for _, e := range actorRequests(t, start) {
		if e.Verb == "delete" && e.ObjectRef != nil {
			out = append(out, e.Resource()+" "+e.ObjectRef.Namespace+"/"+e.ObjectRef.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestHeal_DeadAndJoinlessWorkersAreReplacedAndStuckPodsForceDeletedOnce
// runs both detections and the unwedge in one window: a worker, with two
// pods on it, whose kubelet dies, and a machine whose node never joins. As
// in a real cluster, only kube-controller-manager notices the death: it
// marks the Node Unknown after its grace period and taints it. 60 s later
// the actor deletes the dead worker's Machine; machine-controller's drain
// evicts its pods, which stay Terminating (no kubelet confirms them) and
// hold the teardown until, 60 s after the delete, the actor force-deletes
// exactly those two, once. The joinless machine is replaced after its 60 s
// startup window (its server never boots: a fault of the simulated cloud).
func TestHeal_DeadAndJoinlessWorkersAreReplacedAndStuckPodsForceDeletedOnce(t *testing.T) {
	start := time.Now()
	world, _ := machineWorld(t)
	ctx := ctxT(t)
	if err := world.CreatePool(ctx, "pool-a", 2, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	world.HoldJoins("pool-b", true)
	if err := world.CreatePool(ctx, "pool-b", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pool-a has 2 Ready workers", time.Minute, func() bool { return readyReplacement(t, world, "pool-a", 2, "") })
	ms := poolMachines(t, world, "pool-a")
	victim, healthy := ms[0], ms[1]
	stuck := placePods(t, world, victim.Node, "heal-e2e", 2)
	spare := placePods(t, world, healthy.Node, "heal-e2e", 1)
	if err := world.StopKubelet(victim.Node); err != nil {
		t.Fatal(err)
	}
	joinless := poolMachines(t, world, "pool-b")[0]

	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 4, Execution: map[string]any{"healing": true}, Healing: healPolicy(2),
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 2}, {Name: "pool-b", DesiredReplicas: 1}}}, `"4-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-heal", "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS=60")

	// The grace period (20 s here), then the 60 s unhealthy window.
	b := waitBeatWithin(t, sim, 2*time.Minute, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "heal", victim.Name)
		return ok && a.Status == "done"
	})
	a, _ := findAction(actionsOf(b), "heal", victim.Name)
	if a.Revision != 4 || !strings.Contains(a.Detail, victim.Node) || !strings.Contains(a.Detail, "recreates") {
		t.Errorf("dead worker's heal report %+v: want revision 4 naming node %s and saying the MachineSet recreates it", a, victim.Node)
	}
	waitFor(t, "the dead worker's pods are stuck Terminating", time.Minute, func() bool {
		pods, err := world.PodsOn(ctxT(t), victim.Node)
		return err == nil && len(pods) == 2 && pods[0].Terminating && pods[1].Terminating
	})

	// The joinless machine goes once it is 60 s old; its replacement may join.
	waitFor(t, "the joinless machine is healed", 2*time.Minute, func() bool {
		a, ok := latestAction(sim, "heal", joinless.Name)
		return ok && a.Status == "done" && strings.Contains(a.Detail, "no node joined")
	})
	world.HoldJoins("pool-b", false)

	waitFor(t, "the stuck pods are force-deleted", 2*time.Minute, func() bool {
		a, ok := latestAction(sim, "heal", victim.Name)
		return ok && strings.Contains(a.Detail, "unwedged")
	})
	a, _ = latestAction(sim, "heal", victim.Name)
	if a.Status != "done" || !strings.Contains(a.Detail, "2 pod(s)") || !strings.Contains(a.Detail, victim.Node) {
		t.Errorf("unwedge report %+v: want done with 2 pod(s) on node %s", a, victim.Node)
	}
	waitFor(t, "pool-a has 2 Ready workers again, the dead one gone", 2*time.Minute,
		func() bool { return readyReplacement(t, world, "pool-a", 2, victim.Name) })
	waitFor(t, "pool-b's replacement joined", 2*time.Minute,
		func() bool { return readyReplacement(t, world, "pool-b", 1, joinless.Name) })

	want := []string{
		"machines kube-system/" + joinless.Name,
		"machines kube-system/" + victim.Name,
		"pods heal-e2e/" + stuck[0],
		"pods heal-e2e/" + stuck[1],
	}
	slices.Sort(want)
	if got := deletes(t, start); !slices.Equal(got, want) {
		t.Errorf("the actor deleted %v\nwant exactly, once each: %v (never %s on a healthy node)", got, want, spare[0])
	}
}

// TestHeal_StormBrakeDeletesNothingUntilTheLimitAllows: three dead workers
// against maxUnhealthy 1 is an outage, not three broken machines. Every
// candidate is reported with the storm-brake text and nothing is deleted.
// The control: the next revision allows 3, and the same nodes are healed.
// The deaths are dated 10 minutes back (the kubelets stop, and the Nodes
// are written Unknown as kube-controller-manager would have written them
// then), so the test need not wait out the unhealthy window.
func TestHeal_StormBrakeDeletesNothingUntilTheLimitAllows(t *testing.T) {
	start := time.Now()
	world, _ := machineWorld(t)
	readyPool(t, world, "pool-a", 3, clustersim.PoolOptions{})
	dead := poolMachines(t, world, "pool-a")
	for _, m := range dead {
		if err := world.SetNodeCondition(ctxT(t), m.Node, corev1.ConditionUnknown, time.Now().Add(-10*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	sim := startSim(t, platformsim.Options{})
	doc := desiredDoc{Revision: 5, Execution: map[string]any{"healing": true}, Healing: healPolicy(1),
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 3}}}
	if err := sim.SetDesired(doc, `"5-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-storm")

	const storm = "unhealthy count 3 exceeds maxUnhealthy 1 — refusing (possible outage)"
	b := waitBeat(t, sim, func(b platformsim.Beat) bool { return len(actionsOf(b)) == 3 })
	for _, m := range dead {
		a, ok := findAction(actionsOf(b), "heal", m.Name)
		if !ok || a.Status != "failed" || a.Detail != storm || a.Revision != 5 {
			t.Errorf("%s: report %+v, want failed with exactly %q", m.Name, a, storm)
		}
	}
	// Three more polls, each a pass (healing re-evaluates on every tick),
	// must still delete nothing.
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
		t.Fatalf("the storm brake let the actor delete %v", got)
	}

	doc.Revision, doc.Healing = 6, healPolicy(3)
	if err := sim.SetDesired(doc, `"6-1"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "with maxUnhealthy 3 the dead workers are deleted", time.Minute, func() bool { return len(deletes(t, start)) == 3 })
}

// TestHeal_WithoutTheMachinesDeleteRuleFailsClosedWhileScalingWorks removes
// only the Machine delete rule from deploy/actor's Role: the heal is refused
// by the apiserver and reported with the missing permission, while the same
// document's scaling still lands. The victim's kubelet reports NotReady,
// dated 5 minutes back so the test need not wait them out.
func TestHeal_WithoutTheMachinesDeleteRuleFailsClosedWhileScalingWorks(t *testing.T) {
	world, mds := machineWorld(t)
	ctx := ctxT(t)
	for _, p := range []struct {
		name string
		n    int64
	}{{"pool-a", 2}, {"pool-s", 1}} {
		if err := world.CreatePool(ctx, p.name, p.n, clustersim.PoolOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "pool-a has 2 Ready workers", time.Minute, func() bool { return readyReplacement(t, world, "pool-a", 2, "") })
	withoutMachineDelete(t)
	victim := poolMachines(t, world, "pool-a")[0]
	if err := world.SetNodeCondition(ctx, victim.Node, corev1.ConditionFalse, time.Now().Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 7, Execution: map[string]any{"healing": true, "scaling": true}, Healing: healPolicy(1),
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 2}, {Name: "pool-s", DesiredReplicas: 2}}}, `"7-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-norbac")

	b := waitBeat(t, sim, func(b platformsim.Beat) bool {
		h, hok := findAction(actionsOf(b), "heal", victim.Name)
		s, sok := findAction(actionsOf(b), "scale", "pool-s")
		return hok && h.Status == "failed" && sok && s.Status == "done"
	})
	h, _ := findAction(actionsOf(b), "heal", victim.Name)
	for _, w := range []string{"delete failed", "RBAC", "delete on machines.cluster.k8s.io"} {
		if !strings.Contains(h.Detail, w) {
			t.Errorf("heal report %q does not mention %q", h.Detail, w)
		}
	}
	if n := replicasOf(t, mds, "pool-s"); n != 2 {
		t.Errorf("pool-s has %d replicas, want scaling to have landed at 2", n)
	}
	if m := poolMachines(t, world, "pool-a"); m[0].Name != victim.Name || m[0].Deleting {
		t.Errorf("the dead worker %s was deleted without the permission", victim.Name)
	}
}

// withoutMachineDelete takes the Machine delete rule out of the actor's
// Role for one test and puts the Role back afterwards.
func withoutMachineDelete(t *testing.T) {
	t.Helper()
	roles := suite.env.Client.RbacV1().Roles("kube-system")
	role, err := roles.Get(ctxT(t), "kubehz-actor-machines", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	original := role.DeepCopy()
	var kept []rbacv1.PolicyRule
	removed := 0
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "machines") && slices.Contains(r.Verbs, "delete") {
			removed++
			continue
		}
		kept = append(kept, r)
	}
	if removed != 1 {
		t.Fatalf("deploy/actor's Role has %d Machine delete rules, want exactly 1", removed)
	}
	role.Rules = kept
	if _, err := roles.Update(ctxT(t), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		current, err := roles.Get(context.Background(), original.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("restore the Role: %v", err)
			return
		}
		current.Rules = original.Rules
		if _, err := roles.Update(context.Background(), current, metav1.UpdateOptions{}); err != nil {
			t.Errorf("restore the Role: %v", err)
		}
	})
	waitFor(t, "the apiserver's authorizer sees the rule gone", 30*time.Second, func() bool {
		ok, err := suite.env.ServiceAccountCan(ctxT(t), "kubehz-system", "kubehz-actor", res("delete", "cluster.k8s.io", "machines", "", "kube-system", "x"), nil)
		return err == nil && !ok
	})
}

// freezeMachineController stops machine-controller (SIGSTOP) until thaw,
// or the end of the test: a controller that lags, acting on nothing.
func freezeMachineController(t *testing.T, world *clustersim.World) (mc *kube.Process, thaw func()) {
	t.Helper()
	mc = world.Controllers.MachineController()
	if err := mc.Freeze(); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw = func() {
		if !thawed {
			thawed = true
			if err := mc.Thaw(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(thaw)
	return mc, thaw
}

// TestHeal_WaitsForWhatARollOfTheSamePassTakesDown: machine-controller
// takes a roll's first Machines down only once the patch reaches it, so a
// read in the pass that sends the patch need not show them deleting; that
// pass counts them itself. machine-controller reacts here in milliseconds,
// so it is frozen (SIGSTOP) for that one pass to open the window. pool-a (3
// replicas, maxSurge 0, maxUnavailable 2) starts rolling in the very pass
// that may first heal pool-b's dead worker, under maxUnhealthy 2: the heal
// waits on the 2 Machines the roll will take down. Thawed, machine-controller
// does take 2 down at once (the simulated cloud holds their deletion and
// their replacements' joins, so they stay deleting), and the heal keeps
// waiting. Revision 7 lines the pass up: it names only pool-c, whose roll
// shows the control-plane gate open, and leaves pool-b unnamed, so its dead
// worker is refused; revision 8 names all three. The actor polls every 3 s
// so that its next pass comes after machine-controller has been thawed and
// has acted. The control: once the roll's deletions are released, the same
// dead worker is healed.
func TestHeal_WaitsForWhatARollOfTheSamePassTakesDown(t *testing.T) {
	start := time.Now()
	world, _ := machineWorld(t)
	ctx := ctxT(t)
	for _, p := range []struct {
		name     string
		replicas int64
		opts     clustersim.PoolOptions
	}{
		{"pool-a", 3, clustersim.PoolOptions{Kubelet: "v1.35.5",
			Strategy: map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(2)}}}},
		{"pool-b", 1, clustersim.PoolOptions{Kubelet: "v1.35.6"}},
		{"pool-c", 1, clustersim.PoolOptions{Kubelet: "v1.35.5"}},
	} {
		readyPool(t, world, p.name, p.replicas, p.opts)
	}
	dead, oldC := poolMachines(t, world, "pool-b")[0], poolMachines(t, world, "pool-c")[0]
	if err := world.SetNodeCondition(ctx, dead.Node, corev1.ConditionUnknown, time.Now().Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}

	sim := startSim(t, platformsim.Options{})
	doc := desiredDoc{Revision: 7, KubernetesVersion: "v1.35.6", Execution: map[string]any{"upgrades": true, "healing": true},
		Healing: healPolicy(2), WorkerPools: []desiredPool{{Name: "pool-c", DesiredReplicas: 1}}}
	if err := sim.SetDesired(doc, `"7-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-roll-budget", "KUBEHZ_DESIRED_POLL_SECONDS=3")
	waitBeatWithin(t, sim, 2*time.Minute, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "upgrade", "pool-c")
		return ok && a.Status == "done"
	})
	// Until its old Machine is gone, pool-c still counts as rolling, and
	// pool-a would wait its turn.
	waitFor(t, "pool-c's old Machine is gone", time.Minute, func() bool { return readyReplacement(t, world, "pool-c", 1, oldC.Name) })

	if err := world.StallDeletes("pool-a", true); err != nil {
		t.Fatal(err)
	}
	// Without new Nodes the old MachineSet never goes below 1: the count
	// stays at the 2 the roll takes down at once.
	world.HoldJoins("pool-a", true)
	mc, thaw := freezeMachineController(t, world)
	doc.Revision = 8
	doc.WorkerPools = []desiredPool{{Name: "pool-a", DesiredReplicas: 3}, {Name: "pool-b", DesiredReplicas: 1}, {Name: "pool-c", DesiredReplicas: 1}}
	if err := sim.SetDesired(doc, `"8-1"`); err != nil {
		t.Fatal(err)
	}
	b := waitBeatWithin(t, sim, time.Minute, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "heal", dead.Name)
		return ok && a.Revision == 8
	})
	thaw()
	if up, ok := findAction(actionsOf(b), "upgrade", "pool-a"); !ok || up.Status != "in-progress" {
		t.Errorf("pool-a's upgrade report %+v on the first beat of revision 8, want in-progress: the roll and the heal must share the pass", up)
	}
	const waiting = "waiting: 2 disruption(s) already in flight (maxUnhealthy 2)"
	if a, _ := findAction(actionsOf(b), "heal", dead.Name); a.Status != "pending" || !strings.HasPrefix(a.Detail, waiting) {
		t.Errorf("the dead worker's first heal report of revision 8 is %+v, want pending with %q", a, waiting)
	}

	deleting := func() int {
		n := 0
		for _, m := range poolMachines(t, world, "pool-a") {
			if m.Deleting {
				n++
			}
		}
		return n
	}
	waitFor(t, "machine-controller takes 2 of pool-a's Machines down at once", time.Minute, func() bool {
		if mc.Exited() {
			t.Fatalf("machine-controller exited after its freeze:\n%s", tail(mc.Output(), 3000))
		}
		return deleting() == 2
	})
	if got := deletes(t, start); len(got) != 0 {
		t.Fatalf("the actor deleted %v while the roll took 2 Machines down under maxUnhealthy 2", got)
	}

	if err := world.StallDeletes("pool-a", false); err != nil {
		t.Fatal(err)
	}
	world.HoldJoins("pool-a", false)
	waitFor(t, "the dead worker is healed once the roll's deletions are done", 2*time.Minute, func() bool {
		got := deletes(t, start)
		return len(got) == 1 && got[0] == "machines kube-system/"+dead.Name
	})
}

// TestHeal_WaitsForAScaleDownMachineControllerHasYetToCarryOut: a scale-down
// of an earlier pass, or anyone's, takes Machines down only once
// machine-controller gets to it, and until then no read shows them
// deleting. Every later pass counts each live Machine past its pool's
// spec.replicas in flight. machine-controller reacts here in milliseconds,
// so it is frozen (SIGSTOP) for a few passes to hold it behind: pool-a (3
// replicas) is scaled to 2 at revision 7, beside pool-b's dead worker under
// maxUnhealthy 1, and revision 8 asks again with nothing to patch. The
// dead worker waits on the Machine machine-controller has yet to remove.
// The control: thawed, machine-controller removes it, and the same dead
// worker is healed; that one delete must come after the thaw.
func TestHeal_WaitsForAScaleDownMachineControllerHasYetToCarryOut(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	ctx := ctxT(t)
	readyPool(t, world, "pool-a", 3, clustersim.PoolOptions{})
	readyPool(t, world, "pool-b", 1, clustersim.PoolOptions{})

	sim := startSim(t, platformsim.Options{})
	doc := desiredDoc{Revision: 6, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 3}, {Name: "pool-b", DesiredReplicas: 1}}}
	if err := sim.SetDesired(doc, `"6-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-lagging-scale-down")
	waitBeatWithin(t, sim, 2*time.Minute, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "scale", "pool-a")
		return ok && a.Status == "done" && a.Revision == 6
	})
	dead := poolMachines(t, world, "pool-b")[0]
	if err := world.SetNodeCondition(ctx, dead.Node, corev1.ConditionUnknown, time.Now().Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}

	// The freeze must stay within machine-controller's leader-election
	// renew deadline (10 s), or it stops leading when thawed: the actor
	// polls every second, and each wait below gives up at 9 s.
	mc, thaw := freezeMachineController(t, world)
	doc.Revision = 7
	doc.Execution = map[string]any{"scaling": true, "healing": true}
	doc.Healing = healPolicy(1)
	doc.WorkerPools[0].DesiredReplicas = 2
	if err := sim.SetDesired(doc, `"7-1"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pool-a is patched to 2", 9*time.Second, func() bool { return replicasOf(t, mds, "pool-a") == 2 })
	doc.Revision = 8
	if err := sim.SetDesired(doc, `"8-1"`); err != nil {
		t.Fatal(err)
	}
	b := waitBeatWithin(t, sim, 9*time.Second, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "heal", dead.Name)
		return ok && a.Revision == 8
	})
	live := 0
	for _, m := range poolMachines(t, world, "pool-a") {
		if !m.Deleting {
			live++
		}
	}
	thawedAt := time.Now()
	thaw()
	if live != 3 {
		t.Fatalf("pool-a had %d live Machines when revision 8 was decided, want 3: machine-controller was not behind", live)
	}
	const waiting = "waiting: 1 disruption(s) already in flight (maxUnhealthy 1)"
	if a, _ := findAction(actionsOf(b), "heal", dead.Name); a.Status != "pending" || !strings.HasPrefix(a.Detail, waiting) {
		t.Errorf("the dead worker's first heal report of revision 8 is %+v, want pending with %q", a, waiting)
	}

	waitFor(t, "the dead worker is healed once machine-controller has scaled pool-a down", 2*time.Minute, func() bool {
		if mc.Exited() {
			t.Fatalf("machine-controller exited after its freeze:\n%s", tail(mc.Output(), 3000))
		}
		got := deletes(t, start)
		return len(got) == 1 && got[0] == "machines kube-system/"+dead.Name
	})
	// Thawed, machine-controller removes pool-a's surplus within
	// milliseconds and the heal may follow before any check could run, so
	// the delete is judged by when the apiserver received it.
	for _, e := range actorRequests(t, start) {
		if e.Verb == "delete" && e.ObjectRef != nil && e.RequestReceived.Before(thawedAt) {
			t.Errorf("the actor deleted %s/%s while machine-controller was frozen with a Machine of pool-a to remove, under maxUnhealthy 1",
				e.ObjectRef.Namespace, e.ObjectRef.Name)
		}
	}
}
