package e2e

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/platformsim"
)

// mdPatches lists the actor's MachineDeployment patches since start,
// by MD name, in order.
func mdPatches(t *testing.T, start time.Time) []string {
	var out []string
	for _, e := range actorRequests(t, start) {
		if e.Verb == "patch" && e.Resource() == "machinedeployments" && e.ObjectRef != nil {
			out = append(out, e.ObjectRef.Name)
		}
	}
	return out
}

// TestUpgrade_RollsPoolAThenPoolBWithProgressInTheBeats: two pools at
// v1.35.5 and a target of v1.35.6 (inside the skew policy of both tested
// apiservers). pool-a rolls first, node by node, with n/m progress on the
// beats; pool-b waits with "one pool rolls at a time" and starts only once
// pool-a has converged. Nodes join 2 s after their Machines, so each step
// of a roll outlasts a 1 s poll and the beat that follows it.
func TestUpgrade_RollsPoolAThenPoolBWithProgressInTheBeats(t *testing.T) {
	start := time.Now()
	world, _ := machineWorldJoiningAfter(t, 2*time.Second)
	for _, p := range []string{"pool-a", "pool-b"} {
		if err := world.CreatePool(ctxT(t), p, 2, clustersim.PoolOptions{Kubelet: "v1.35.5"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"pool-a", "pool-b"} {
		waitFor(t, p+" has 2 Ready workers", time.Minute, func() bool { return readyReplacement(t, world, p, 2, "") })
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 9, KubernetesVersion: "v1.35.6", Execution: map[string]any{"upgrades": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 2}, {Name: "pool-b", DesiredReplicas: 2}}}, `"9-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-upgrade")

	done := func(pool string) func(platformsim.Beat) bool {
		return func(b platformsim.Beat) bool {
			a, ok := findAction(actionsOf(b), "upgrade", pool)
			return ok && a.Status == "done"
		}
	}
	waitBeatWithin(t, sim, 2*time.Minute, done("pool-a"))
	waitBeatWithin(t, sim, 2*time.Minute, done("pool-b"))

	// Read the whole story off the beats.
	var aDoneAt, bStartAt uint64
	bWaited := 0 // beats showing pool-b waiting its turn while pool-a rolls
	sawProgress := map[string]bool{}
	for _, b := range sim.Beats() {
		as := actionsOf(b)
		a, aok := findAction(as, "upgrade", "pool-a")
		bb, bok := findAction(as, "upgrade", "pool-b")
		if aok && a.Status == "in-progress" && bok && bb.Status == "in-progress" {
			t.Errorf("beat %d: both pools roll at once: %+v %+v", b.Seq, a, bb)
		}
		if aok && a.Status == "in-progress" {
			if !bok || bb.Status != "pending" || !strings.Contains(bb.Detail, "one pool rolls at a time") {
				t.Errorf("beat %d: pool-b is %s %q while pool-a rolls, want pending one pool rolls at a time", b.Seq, bb.Status, bb.Detail)
			} else {
				bWaited++
			}
		}
		for _, x := range []action{a, bb} {
			if x.Status == "in-progress" || x.Status == "done" {
				sawProgress[x.Target+" "+x.Status+" "+x.Detail] = true
			}
		}
		if aok && a.Status == "done" && aDoneAt == 0 {
			aDoneAt = b.Seq
		}
		if bok && bb.Status == "in-progress" && bStartAt == 0 {
			bStartAt = b.Seq
		}
	}
	t.Logf("progress seen on the beats: %v", slices.Sorted(maps.Keys(sawProgress)))
	// Progress, not only a start and an end: some beat shows pool-a part
	// way, n of m Machines at the target with 0 < n < m.
	midway := regexp.MustCompile(`^pool-a in-progress v1\.35\.5 → v1\.35\.6 \(([1-9]\d*)/(\d+)\)$`)
	if !slices.ContainsFunc(slices.Collect(maps.Keys(sawProgress)), func(p string) bool {
		m := midway.FindStringSubmatch(p)
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		return n < total
	}) {
		t.Errorf("no beat showed pool-a part way through its roll (n/m with 0 < n < m)")
	}
	if bWaited == 0 {
		t.Errorf("no beat showed pool-b pending, one pool rolls at a time, while pool-a rolled")
	}
	switch {
	case bStartAt == 0:
		t.Errorf("no beat showed pool-b rolling")
	case aDoneAt == 0:
		t.Errorf("no beat showed pool-a done")
	case bStartAt < aDoneAt:
		t.Errorf("pool-b started rolling (beat %d) before pool-a was done (beat %d)", bStartAt, aDoneAt)
	}
	for _, want := range []string{
		"pool-a in-progress v1.35.5 → v1.35.6 (0/2)", "pool-a done v1.35.5 → v1.35.6 (2/2)",
		"pool-b done v1.35.5 → v1.35.6 (2/2)",
	} {
		if !sawProgress[want] {
			t.Errorf("no beat carried %q; progress seen: %v", want, sawProgress)
		}
	}
	if got := mdPatches(t, start); strings.Join(got, ",") != "pool-a,pool-b" {
		t.Errorf("MachineDeployment patches %v, want pool-a then pool-b, once each", got)
	}
	for _, p := range []string{"pool-a", "pool-b"} {
		for _, m := range poolMachines(t, world, p) {
			if !m.Deleting && strings.TrimPrefix(m.Kubelet, "v") != "1.35.6" {
				t.Errorf("%s: Machine %s still at %s", p, m.Name, m.Kubelet)
			}
		}
	}
}

// TestUpgrade_DowngradeAndSkewAreRefused: a target below a pool's kubelet,
// a target more than 3 minors behind the control plane, and a target ahead
// of it are each refused with their own reason, and nothing is patched.
// The control comes last: a valid target on the same pools rolls.
func TestUpgrade_DowngradeAndSkewAreRefused(t *testing.T) {
	start := time.Now()
	info, err := suite.env.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	cpMinor, err := strconv.Atoi(strings.TrimRight(info.Minor, "+"))
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf("v1.%d.0", cpMinor-4)
	world, _ := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-d", 1, clustersim.PoolOptions{Kubelet: "v1.35.5"}); err != nil {
		t.Fatal(err)
	}
	if err := world.CreatePool(ctxT(t), "pool-old", 1, clustersim.PoolOptions{Kubelet: old}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	pools := []desiredPool{{Name: "pool-d", DesiredReplicas: 1}, {Name: "pool-old", DesiredReplicas: 1}}
	// One minor past the oldest pool, still 4 behind the control plane:
	// a downgrade for pool-d and outside the skew policy for pool-old.
	behind := fmt.Sprintf("v1.%d.1", cpMinor-4)
	if err := sim.SetDesired(desiredDoc{Revision: 11, KubernetesVersion: behind, Execution: map[string]any{"upgrades": true},
		WorkerPools: pools}, `"11-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-refuse-upgrade")

	// A new actor reports "control plane version unknown" until the
	// version has held for 10 s, so this waits for each pool's own reason.
	refused := func(rev int64, want map[string]string) {
		t.Helper()
		waitBeat(t, sim, func(b platformsim.Beat) bool {
			for pool, word := range want {
				a, ok := findAction(actionsOf(b), "upgrade", pool)
				if !ok || a.Revision != rev || a.Status != "failed" || !strings.Contains(a.Detail, word) {
					return false
				}
			}
			return true
		})
	}
	refused(11, map[string]string{"pool-d": "downgrade", "pool-old": "skew"})

	ahead := fmt.Sprintf("v1.%d.0", cpMinor+1)
	if err := sim.SetDesired(desiredDoc{Revision: 12, KubernetesVersion: ahead, Execution: map[string]any{"upgrades": true},
		WorkerPools: pools}, `"12-1"`); err != nil {
		t.Fatal(err)
	}
	refused(12, map[string]string{"pool-d": "control plane not yet at target", "pool-old": "control plane not yet at target"})

	if got := mdPatches(t, start); len(got) != 0 {
		t.Errorf("the actor patched %v", got)
	}
	// The control, on the same pools and actor: a target inside the policy
	// for both rolls the first of them, so the refusals above were the
	// pre-flight's doing, not an actor that would roll nothing.
	if err := sim.SetDesired(desiredDoc{Revision: 13, KubernetesVersion: "v1.35.6", Execution: map[string]any{"upgrades": true},
		WorkerPools: pools}, `"13-1"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pool-d rolls to a valid target", time.Minute, func() bool {
		got := mdPatches(t, start)
		return len(got) > 0 && got[0] == "pool-d"
	})
}
