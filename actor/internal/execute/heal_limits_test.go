package execute_test

import (
	"fmt"
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/wire"
)

// hostile is a document asking for every brake off, at the contract's own
// bounds: maxUnhealthy 1000, no cooldown, and both detection windows at
// the 60 s floor.
func hostile(rev int64) desired.Document {
	return healing(rev, desired.Healing{Enabled: true, MaxUnhealthy: 1000,
		UnhealthyAfterSeconds: 60, NodeStartupTimeoutSeconds: 60, CooldownSeconds: 0})
}

// limitsReport is what the platform is told: the values used, and what the
// document asked.
const limitsReport = "maxUnhealthy 3 (asked 1000)|cooldownSeconds 600 (asked 0)|" +
	"nodeStartupTimeoutSeconds 600 (asked 60)|unhealthyAfterSeconds 300 (asked 60)|local limits"

// A document asking for more than the cluster owner's local limits gets the
// local limits, and a report saying so, whatever else the pass does.
func TestHeal_ADocumentAskingForMoreThanTheLocalLimitsGetsTheLimits(t *testing.T) {
	down := start.Add(-10 * time.Minute)
	limited := report{"healing policy", wire.StatusFailed, 7, limitsReport}
	cases := []struct {
		name        string
		mds         []*cluster.MachineDeployment
		machines    []*cluster.Machine
		nodes       []*cluster.Node
		wantDeletes int
		want        []report
	}{
		{
			name: "four workers down is a storm at 3, not a licence to delete all four",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 2), poolMD("pool-b", 2)},
			machines: []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
				machine("pool-b-m3", "pool-b", "node-3"), machine("pool-b-m4", "pool-b", "node-4")},
			nodes: []*cluster.Node{node("node-1", "Unknown", down), node("node-2", "Unknown", down),
				node("node-3", "Unknown", down), node("node-4", "Unknown", down)},
			want: []report{limited,
				{"pool-a-m1", wire.StatusFailed, 7, "unhealthy count 4 exceeds maxUnhealthy 3 — refusing (possible outage)"},
				{"pool-a-m2", wire.StatusFailed, 7, "exceeds maxUnhealthy 3"},
				{"pool-b-m3", wire.StatusFailed, 7, "exceeds maxUnhealthy 3"},
				{"pool-b-m4", wire.StatusFailed, 7, "exceeds maxUnhealthy 3"}},
		},
		{
			name: "three Machines already deleting leave no budget",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 4)},
			machines: []*cluster.Machine{deleting(machine("pool-a-m1", "pool-a", "node-1")), deleting(machine("pool-a-m2", "pool-a", "node-2")),
				deleting(machine("pool-a-m3", "pool-a", "node-3")), machine("pool-a-m4", "pool-a", "node-4")},
			nodes: []*cluster.Node{node("node-4", "False", down)},
			want:  []report{limited, {"pool-a-m4", wire.StatusPending, 7, "3 disruption(s) already in flight (maxUnhealthy 3)"}},
		},
		{
			name:     "a node down 299 s is inside the 300 s unhealthy window",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:    []*cluster.Node{node("node-1", "False", start.Add(-299*time.Second))},
			want:     []report{limited},
		},
		{
			name:     "a Machine 599 s old is inside the 600 s startup window",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{joinless("pool-a-m1", "pool-a", 599*time.Second)},
			want:     []report{limited},
		},
		{
			name:     "a new term waits the 600 s cooldown before its first heal",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:    []*cluster.Node{node("node-1", "False", down)},
			want:     []report{limited, {"pool-a-m1", wire.StatusPending, 7, "cooldown|" + until(start.Add(600*time.Second))}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, tc.mds...)
			h.exec.HealLimits = shippedLimits
			h.world.add(tc.machines...)
			h.world.addNodes(tc.nodes...)
			h.exec.Execute(t.Context(), hostile(7))
			if n := len(h.world.machineDeletes); n != tc.wantDeletes {
				t.Errorf("%d machine deletes %+v, want %d", n, h.world.machineDeletes, tc.wantDeletes)
			}
			checkTyped(t, tc.name, wire.ActionHeal, h.store.Snapshot(), tc.want)
		})
	}
}

// The limits hold across passes too: a pool heals once per 600 s however
// often the document allows, and each heal is 600 s after the last.
func TestHeal_LocalCooldownHoldsAPoolAgainstADocumentWithNone(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 3))
	h.exec.HealLimits = shippedLimits
	down := start.Add(-10 * time.Minute)
	for i := 1; i <= 3; i++ {
		h.world.add(machine(fmt.Sprintf("pool-a-m%d", i), "pool-a", fmt.Sprintf("node-%d", i)))
		h.world.addNodes(node(fmt.Sprintf("node-%d", i), "False", down))
	}
	for _, at := range []time.Duration{600 * time.Second, 1199 * time.Second, 1200 * time.Second} {
		h.clock.set(start.Add(at))
		h.exec.Execute(t.Context(), hostile(7))
	}
	var got []string
	for _, d := range h.world.machineDeletes {
		got = append(got, d.Name)
	}
	if want := "[pool-a-m1 pool-a-m2]"; fmt.Sprint(got) != want {
		t.Errorf("deleted %v by 600 s, 1199 s and 1200 s after the term began, want %s", got, want)
	}
}

// A document within the limits is not reported: the limits only speak when
// they bind.
func TestHeal_ADocumentWithinTheLocalLimitsIsNotReported(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.exec.HealLimits = shippedLimits
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "True", start))
	// The platform's own defaults: maxUnhealthy 1, 600 s, 300 s, 900 s.
	h.exec.Execute(t.Context(), healing(7, desired.Healing{Enabled: true, MaxUnhealthy: 1,
		NodeStartupTimeoutSeconds: 600, UnhealthyAfterSeconds: 300, CooldownSeconds: 900}))
	checkTyped(t, "within the limits", wire.ActionHeal, h.store.Snapshot(), nil)
}
