package heal

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

const stormLimit1of2 = "unhealthy count 2 exceeds maxUnhealthy 1 — refusing (possible outage)"

func TestHeal_DecideWalksTheTable(t *testing.T) {
	down5m := now.Add(-5 * time.Minute)
	cause1 := nodeCause("n1", "NotReady", "5m0s", "1m0s")
	cause2 := nodeCause("n2", "NotReady", "5m0s", "1m0s")
	// A refusal names the outage by its start, not its length, so it reads
	// the same on every pass.
	steady1 := "node n1 NotReady since " + down5m.UTC().Format(time.RFC3339)
	steady2 := "node n2 NotReady since " + down5m.UTC().Format(time.RFC3339)
	m1 := machine("m1", "workers", "n1")
	m2 := machine("m2", "workers", "n2")
	two := Observed{
		Machines: []Machine{m1, m2},
		Nodes:    nodesOf(notReady("n1", down5m), notReady("n2", down5m)),
		MDs:      workerPools("workers"),
	}
	one := Observed{
		Machines: []Machine{m1},
		Nodes:    nodesOf(notReady("n1", down5m)),
		MDs:      workerPools("workers"),
	}
	tests := []struct {
		name string
		o    Observed
		p    Policy
		mem  *Memory
		want Decision
	}{
		{
			name: "NotReady worker past the window is deleted with preconditions",
			o:    one,
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{Steps: []Step{healing(m1, "n1", down5m, cause1)}, Keep: keep("m1"), InFlight: 1},
		},
		{
			name: "nothing unhealthy gives an empty decision",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(ready("n1")), MDs: workerPools("workers")},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{Keep: keep()},
		},
		{
			name: "node NotReady less than the window is untouched",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", now.Add(-59*time.Second))), MDs: workerPools("workers")},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{Keep: keep()},
		},
		{
			name: "control-plane node is skipped silently and not counted",
			o: Observed{
				Machines: []Machine{m1, machine("cp1", "workers", "cp-node")},
				Nodes:    nodesOf(notReady("n1", down5m), Node{Name: "cp-node", ControlPlane: true, Ready: ReadyFalse, Since: down5m}),
				MDs:      workerPools("workers"),
			},
			p:    with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem:  oldMemory(),
			want: Decision{Steps: []Step{healing(m1, "n1", down5m, cause1)}, Keep: keep("m1"), InFlight: 1},
		},
		{
			name: "joinless machine past the startup timeout is deleted with no node",
			o:    Observed{Machines: []Machine{joinless("j1", "workers", now.Add(-time.Hour))}, MDs: workerPools("workers")},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{healing(joinless("j1", "workers", now.Add(-time.Hour)), "", time.Time{},
					"no node joined within 1h0m0s of creation (nodeStartupTimeout 10m0s)")},
				Keep:     keep("j1"),
				InFlight: 1,
			},
		},
		{
			name: "storm: two unhealthy with limit 1 refuses both and deletes nothing",
			o: Observed{
				Machines: []Machine{m2, m1, machine("m3", "workers", "n3")},
				Nodes:    nodesOf(notReady("n1", down5m), unknown("n2", down5m), ready("n3")),
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed, stormLimit1of2), final("m2", wire.StatusFailed, stormLimit1of2)},
				Keep:  keep("m1", "m2"),
				Storm: true,
			},
		},
		{
			name: "storm: an unbacked NotReady node counts toward the brake (G-12)",
			o: Observed{
				Machines: []Machine{m1},
				Nodes:    nodesOf(notReady("n1", down5m), notReady("orphan", down5m)),
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps:    []Step{final("m1", wire.StatusFailed, stormLimit1of2)},
				Keep:     keep("m1"),
				Unbacked: []string{"orphan"},
				Storm:    true,
			},
		},
		{
			name: "storm: maxUnhealthy 0 trips on a single candidate",
			o:    one,
			p:    with(policy(), func(p *Policy) { p.MaxUnhealthy = 0 }),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed, "unhealthy count 1 exceeds maxUnhealthy 0 — refusing (possible outage)")},
				Keep:  keep("m1"),
				Storm: true,
			},
		},
		{
			name: "storm: refused candidates count too",
			o: Observed{
				Machines: []Machine{machine("m1", "", "n1"), machine("m2", "scaled", "n2")},
				Nodes:    nodesOf(notReady("n1", down5m), notReady("n2", down5m)),
				MDs:      map[string]MD{"scaled": {Autoscaler: "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"}},
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed, stormLimit1of2), final("m2", wire.StatusFailed, stormLimit1of2)},
				Keep:  keep("m1", "m2"),
				Storm: true,
			},
		},
		{
			name: "storm: the in-flight count is still reported",
			o: Observed{
				Machines: []Machine{m1, m2, deleting(machine("gone", "workers", "n9"))},
				Nodes:    two.Nodes,
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps:    []Step{final("m1", wire.StatusFailed, stormLimit1of2), final("m2", wire.StatusFailed, stormLimit1of2)},
				Keep:     keep("m1", "m2"),
				InFlight: 1,
				Storm:    true,
			},
		},
		{
			name: "no storm exactly at the limit: cooldown 0 heals both",
			o:    two,
			p:    with(policy(), func(p *Policy) { p.Cooldown = 0 }),
			mem:  oldMemory(),
			want: Decision{
				Steps:    []Step{healing(m1, "n1", down5m, cause1), healing(m2, "n2", down5m, cause2)},
				Keep:     keep("m1", "m2"),
				InFlight: 2,
			},
		},
		{
			name: "an unbacked node below the limit is reported but nothing is blocked",
			o: Observed{
				Machines: []Machine{m1},
				Nodes:    nodesOf(notReady("n1", down5m), notReady("orphan", down5m)),
				MDs:      workerPools("workers"),
			},
			p:   policy(),
			mem: oldMemory(),
			want: Decision{
				Steps:    []Step{healing(m1, "n1", down5m, cause1)},
				Keep:     keep("m1"),
				Unbacked: []string{"orphan"},
				InFlight: 1,
			},
		},
		{
			name: "budget: one machine already deleting with limit 1 leaves the candidate pending",
			o: Observed{
				Machines: []Machine{m1, deleting(machine("old", "workers", "n-old"))},
				Nodes:    one.Nodes,
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps:    []Step{final("m1", wire.StatusPending, "waiting: 1 disruption(s) already in flight (maxUnhealthy 1); "+steady1)},
				Keep:     keep("m1"),
				InFlight: 1,
			},
		},
		{
			name: "budget: a delete planned this pass uses up the budget for the next candidate",
			o: Observed{
				Machines: []Machine{machine("m1", "pool-a", "n1"), machine("m2", "pool-b", "n2"), deleting(machine("old", "pool-c", ""))},
				Nodes:    two.Nodes,
				MDs:      workerPools("pool-a", "pool-b", "pool-c"),
			},
			p:   with(policy(), func(p *Policy) { p.Cooldown = 0 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{
					healing(machine("m1", "pool-a", "n1"), "n1", down5m, cause1),
					final("m2", wire.StatusPending, "waiting: 2 disruption(s) already in flight (maxUnhealthy 2); "+steady2),
				},
				Keep:     keep("m1", "m2"),
				InFlight: 2,
			},
		},
		{
			name: "budget: deleting control-plane machines count in flight too",
			o: Observed{
				Machines: []Machine{m1, deleting(controlPlane(machine("cp-1", "", "cp-node")))},
				Nodes:    one.Nodes,
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps:    []Step{final("m1", wire.StatusPending, "waiting: 1 disruption(s) already in flight (maxUnhealthy 1); "+steady1)},
				Keep:     keep("m1"),
				InFlight: 1,
			},
		},
		{
			name: "cooldown: the second machine of the same pool waits",
			o:    two,
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{
					healing(m1, "n1", down5m, cause1),
					final("m2", wire.StatusPending, `waiting: cooldown of pool "workers" until `+now.Add(15*time.Minute).UTC().Format(time.RFC3339)+"; "+steady2),
				},
				Keep:     keep("m1", "m2"),
				InFlight: 1,
			},
		},
		{
			name: "cooldown: machines of different pools are healed together",
			o: Observed{
				Machines: []Machine{machine("m1", "pool-a", "n1"), machine("m2", "pool-b", "n2")},
				Nodes:    two.Nodes,
				MDs:      workerPools("pool-a", "pool-b"),
			},
			p:   policy(),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{
					healing(machine("m1", "pool-a", "n1"), "n1", down5m, cause1),
					healing(machine("m2", "pool-b", "n2"), "n2", down5m, cause2),
				},
				Keep:     keep("m1", "m2"),
				InFlight: 2,
			},
		},
		{
			name: "cooldown 0 deletes two machines of the same pool back to back",
			o:    two,
			p:    with(policy(), func(p *Policy) { p.Cooldown = 0 }),
			mem:  NewMemory(now),
			want: Decision{
				Steps:    []Step{healing(m1, "n1", down5m, cause1), healing(m2, "n2", down5m, cause2)},
				Keep:     keep("m1", "m2"),
				InFlight: 2,
			},
		},
		{
			name: "refusal: unowned machine",
			o:    Observed{Machines: []Machine{machine("m1", "", "n1")}, Nodes: one.Nodes, MDs: workerPools("workers")},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed,
					"refusing: no owning MachineDeployment for Machine m1 ("+steady1+"); deleting an unowned machine would lose its capacity for good")},
				Keep: keep("m1"),
			},
		},
		{
			name: "refusal: owner named but not among the MachineDeployments",
			o:    Observed{Machines: []Machine{machine("m1", "ghost", "n1")}, Nodes: one.Nodes, MDs: workerPools("workers")},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed,
					"refusing: no owning MachineDeployment for Machine m1 ("+steady1+"); deleting an unowned machine would lose its capacity for good")},
				Keep: keep("m1"),
			},
		},
		{
			name: "refusal: control-plane pool",
			o:    Observed{Machines: []Machine{machine("m1", "prod-cp-1", "n1")}, Nodes: one.Nodes, MDs: map[string]MD{"prod-cp-1": {ControlPlane: `name segment "cp"`}}},
			p:    policy(),
			mem:  oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed, `refusing: MachineDeployment "prod-cp-1" looks like a control-plane pool (name segment "cp")`)},
				Keep:  keep("m1"),
			},
		},
		{
			name: "refusal: autoscaler pool names the annotation key",
			o: Observed{Machines: []Machine{machine("m1", "scaled", "n1")}, Nodes: one.Nodes,
				MDs: map[string]MD{"scaled": {Autoscaler: "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"}}},
			p:   policy(),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed,
					`refusing: pool "scaled" is managed by cluster-autoscaler (annotation cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size)`)},
				Keep: keep("m1"),
			},
		},
		{
			name: "refusal: control-plane wins over autoscaler",
			o: Observed{Machines: []Machine{machine("m1", "both", "n1")}, Nodes: one.Nodes,
				MDs: map[string]MD{"both": {ControlPlane: "label", Autoscaler: "k"}}},
			p:   policy(),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed, `refusing: MachineDeployment "both" looks like a control-plane pool (label)`)},
				Keep:  keep("m1"),
			},
		},
		{
			name: "refusal wins over an exhausted budget",
			o: Observed{
				Machines: []Machine{machine("m1", "", "n1"), deleting(machine("old", "workers", ""))},
				Nodes:    one.Nodes,
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{final("m1", wire.StatusFailed,
					"refusing: no owning MachineDeployment for Machine m1 ("+steady1+"); deleting an unowned machine would lose its capacity for good")},
				Keep:     keep("m1"),
				InFlight: 1,
			},
		},
		{
			name: "a refused candidate uses no budget and no cooldown",
			o: Observed{
				Machines: []Machine{machine("a-unowned", "", "n1"), machine("b-ok", "workers", "n2")},
				Nodes:    two.Nodes,
				MDs:      workerPools("workers"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 2 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{
					final("a-unowned", wire.StatusFailed,
						"refusing: no owning MachineDeployment for Machine a-unowned ("+steady1+"); deleting an unowned machine would lose its capacity for good"),
					healing(machine("b-ok", "workers", "n2"), "n2", down5m, cause2),
				},
				Keep:     keep("a-unowned", "b-ok"),
				InFlight: 1,
			},
		},
		{
			name: "steps come sorted by machine name whatever the input order",
			o: Observed{
				Machines: []Machine{machine("zz", "pool-z", "n2"), joinless("mm", "pool-m", now.Add(-time.Hour)), machine("aa", "pool-a", "n1")},
				Nodes:    two.Nodes,
				MDs:      workerPools("pool-a", "pool-m", "pool-z"),
			},
			p:   with(policy(), func(p *Policy) { p.MaxUnhealthy = 3 }),
			mem: oldMemory(),
			want: Decision{
				Steps: []Step{
					healing(machine("aa", "pool-a", "n1"), "n1", down5m, cause1),
					healing(joinless("mm", "pool-m", now.Add(-time.Hour)), "", time.Time{}, "no node joined within 1h0m0s of creation (nodeStartupTimeout 10m0s)"),
					healing(machine("zz", "pool-z", "n2"), "n2", down5m, cause2),
				},
				Keep:     keep("aa", "mm", "zz"),
				InFlight: 3,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sameDecision(t, Decide(tt.o, tt.p, tt.mem, now), tt.want)
		})
	}
}

func TestHeal_CooldownBaseline(t *testing.T) {
	down5m := now.Add(-5 * time.Minute)
	cause := nodeCause("n1", "NotReady", "5m0s", "1m0s")
	m1 := machine("m1", "workers", "n1")
	o := Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", down5m)), MDs: workerPools("workers")}
	heal := healing(m1, "n1", down5m, cause)
	// A wait names its end, not what is left of it, so it reads the same on
	// every pass.
	waiting := func(left time.Duration) Step {
		return final("m1", wire.StatusPending, `waiting: cooldown of pool "workers" until `+
			now.Add(left).UTC().Format(time.RFC3339)+"; node n1 NotReady since "+down5m.UTC().Format(time.RFC3339))
	}
	memory := func(since time.Time, last map[string]time.Time) *Memory {
		m := NewMemory(since)
		maps.Copy(m.LastHeal, last)
		return m
	}
	tests := []struct {
		name     string
		cooldown time.Duration
		mem      *Memory
		want     Step
	}{
		{name: "a fresh term refuses at once", cooldown: 900 * time.Second, mem: NewMemory(now), want: waiting(15 * time.Minute)},
		{name: "a term begun 16 minutes ago proceeds", cooldown: 900 * time.Second, mem: NewMemory(now.Add(-16 * time.Minute)), want: heal},
		{name: "exactly at the end of the term's cooldown proceeds", cooldown: 900 * time.Second, mem: NewMemory(now.Add(-900 * time.Second)), want: heal},
		{name: "1ns before the end of the term's cooldown waits", cooldown: 900 * time.Second, mem: NewMemory(now.Add(-900*time.Second + time.Nanosecond)), want: waiting(time.Nanosecond)},
		{
			name:     "a heal recorded after the term began wins",
			cooldown: 900 * time.Second,
			mem:      memory(now.Add(-time.Hour), map[string]time.Time{"workers": now.Add(-10 * time.Minute)}),
			want:     waiting(5 * time.Minute),
		},
		{
			name:     "exactly at the end of the recorded heal's cooldown proceeds",
			cooldown: 900 * time.Second,
			mem:      memory(now.Add(-time.Hour), map[string]time.Time{"workers": now.Add(-900 * time.Second)}),
			want:     heal,
		},
		{
			name:     "1ns before the end of the recorded heal's cooldown waits",
			cooldown: 900 * time.Second,
			mem:      memory(now.Add(-time.Hour), map[string]time.Time{"workers": now.Add(-900*time.Second + time.Nanosecond)}),
			want:     waiting(time.Nanosecond),
		},
		{
			name:     "a heal recorded before the term began is ignored",
			cooldown: 900 * time.Second,
			mem:      memory(now.Add(-5*time.Minute), map[string]time.Time{"workers": now.Add(-2 * time.Hour)}),
			want:     waiting(10 * time.Minute),
		},
		{
			name:     "another pool's recent heal does not hold this pool",
			cooldown: 900 * time.Second,
			mem:      memory(now.Add(-time.Hour), map[string]time.Time{"other": now}),
			want:     heal,
		},
		{name: "cooldown 0: a fresh term proceeds", cooldown: 0, mem: NewMemory(now), want: heal},
		{
			name:     "cooldown 0: a heal recorded this instant does not hold",
			cooldown: 0,
			mem:      memory(now.Add(-time.Hour), map[string]time.Time{"workers": now}),
			want:     heal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := with(policy(), func(p *Policy) { p.Cooldown = tt.cooldown })
			want := Decision{Steps: []Step{tt.want}, Keep: keep("m1")}
			if tt.want.Delete != nil {
				want.InFlight = 1
			}
			sameDecision(t, Decide(o, p, tt.mem, now), want)
		})
	}
}

func TestHeal_StormBrakeRefusesAllWithTheExactText(t *testing.T) {
	o := Observed{
		Machines: []Machine{machine("m1", "workers", "n1"), machine("m2", "workers", "n2")},
		Nodes:    nodesOf(notReady("n1", now.Add(-time.Hour)), notReady("n2", now.Add(-time.Hour)), ready("n3")),
		MDs:      workerPools("workers"),
	}
	d := Decide(o, with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }), oldMemory(), now)
	// Spelled out in full, em dash (U+2014) included, as the contract pins it.
	const want = "unhealthy count 2 exceeds maxUnhealthy 1 \u2014 refusing (possible outage)"
	if !d.Storm || len(d.Steps) != 2 {
		t.Fatalf("want a storm refusing both, got %s", decisionString(d))
	}
	for _, s := range d.Steps {
		if s.Delete != nil {
			t.Errorf("%s: storm must delete nothing, got %+v", s.Action.Target, *s.Delete)
		}
		if s.Action.Detail != want || s.Action.Status != wire.StatusFailed {
			t.Errorf("%s: got %s %q, want failed %q", s.Action.Target, s.Action.Status, s.Action.Detail, want)
		}
		if s.Action.Target == "m3" {
			t.Errorf("healthy machine reported")
		}
	}
}

func TestHeal_UnbackedNodesAloneTripTheStormWithoutSteps(t *testing.T) {
	o := Observed{Nodes: nodesOf(notReady("orphan", now.Add(-time.Hour)))}
	got := Decide(o, with(policy(), func(p *Policy) { p.MaxUnhealthy = 0 }), oldMemory(), now)
	sameDecision(t, got, Decision{Keep: keep(), Unbacked: []string{"orphan"}, Storm: true})
}

func TestHeal_DecideDetailsCarryTheContractKeywords(t *testing.T) {
	down := now.Add(-5 * time.Minute)
	tests := []struct {
		name   string
		o      Observed
		p      Policy
		target string
		status string
		words  []string
	}{
		{
			name:   "deleting names the node, its state and both durations",
			o:      Observed{Machines: []Machine{machine("m1", "workers", "node-x")}, Nodes: nodesOf(notReady("node-x", down)), MDs: workerPools("workers")},
			p:      policy(),
			target: "m1", status: wire.StatusInProgress,
			words: []string{"deleting Machine (", "node-x", "NotReady", "5m0s", "unhealthyAfter 1m0s"},
		},
		{
			name: "budget names in flight, the count and the limit",
			o: Observed{Machines: []Machine{machine("m1", "workers", "n1"), deleting(machine("old", "workers", ""))},
				Nodes: nodesOf(notReady("n1", down)), MDs: workerPools("workers")},
			p:      with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }),
			target: "m1", status: wire.StatusPending,
			words: []string{"in flight", "1 disruption(s)", "maxUnhealthy 1"},
		},
		{
			name: "cooldown names the pool and when it ends",
			o: Observed{Machines: []Machine{machine("m1", "pool-q", "n1")},
				Nodes: nodesOf(notReady("n1", down)), MDs: workerPools("pool-q")},
			p:      policy(),
			target: "m1", status: wire.StatusPending,
			words: []string{"cooldown", "pool-q", "until " + now.Add(15*time.Minute).UTC().Format(time.RFC3339)},
		},
		{
			name: "autoscaler names cluster-autoscaler, the pool and the key",
			o: Observed{Machines: []Machine{machine("m1", "auto", "n1")}, Nodes: nodesOf(notReady("n1", down)),
				MDs: map[string]MD{"auto": {Autoscaler: "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"}}},
			p:      policy(),
			target: "m1", status: wire.StatusFailed,
			words: []string{"cluster-autoscaler", "auto", "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"},
		},
		{
			name: "control-plane pool says control-plane",
			o: Observed{Machines: []Machine{machine("m1", "edge-cp-pool", "n1")}, Nodes: nodesOf(notReady("n1", down)),
				MDs: map[string]MD{"edge-cp-pool": {ControlPlane: "name"}}},
			p:      policy(),
			target: "m1", status: wire.StatusFailed,
			words: []string{"control-plane"},
		},
		{
			name:   "unowned says no owning MachineDeployment",
			o:      Observed{Machines: []Machine{machine("m1", "", "n1")}, Nodes: nodesOf(notReady("n1", down))},
			p:      policy(),
			target: "m1", status: wire.StatusFailed,
			words: []string{"no owning MachineDeployment"},
		},
		{
			name:   "joinless says no node joined",
			o:      Observed{Machines: []Machine{joinless("j1", "workers", now.Add(-time.Hour))}, MDs: workerPools("workers")},
			p:      policy(),
			target: "j1", status: wire.StatusInProgress,
			words: []string{"no node joined"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := NewMemory(now) // a fresh term: the cooldown holds
			if tt.status == wire.StatusInProgress {
				mem = oldMemory()
			}
			d := Decide(tt.o, tt.p, mem, now)
			if len(d.Steps) != 1 {
				t.Fatalf("want one step, got %s", decisionString(d))
			}
			a := d.Steps[0].Action
			if a.Target != tt.target || a.Status != tt.status || a.Type != wire.ActionHeal || a.Revision != testRev {
				t.Errorf("got %+v, want heal %s %s at revision %d", a, tt.target, tt.status, testRev)
			}
			for _, w := range tt.words {
				if !strings.Contains(a.Detail, w) {
					t.Errorf("detail %q lacks %q", a.Detail, w)
				}
			}
		})
	}
}

func TestHeal_DecideCarriesTheRevision(t *testing.T) {
	o := Observed{
		Machines: []Machine{machine("m1", "workers", "n1"), machine("m2", "", "n2"), machine("m3", "workers", "n3")},
		Nodes:    nodesOf(notReady("n1", now.Add(-time.Hour)), notReady("n2", now.Add(-time.Hour)), notReady("n3", now.Add(-time.Hour))),
		MDs:      workerPools("workers"),
	}
	for _, limit := range []int{1, 3} { // storm, then the table
		p := with(policy(), func(p *Policy) { p.MaxUnhealthy = limit; p.Revision = 10_000_000 })
		d := Decide(o, p, oldMemory(), now)
		if len(d.Steps) != 3 {
			t.Fatalf("limit %d: want three steps, got %s", limit, decisionString(d))
		}
		for _, s := range d.Steps {
			if s.Action.Revision != 10_000_000 || s.Action.Type != wire.ActionHeal {
				t.Errorf("limit %d: %+v does not carry heal at revision 10000000", limit, s.Action)
			}
		}
	}
}

func TestHeal_DecideDoesNotChangeMemoryOrInput(t *testing.T) {
	mem := NewMemory(now.Add(-time.Hour))
	mem.LastHeal["workers"] = now.Add(-20 * time.Minute)
	mem.Tracked["old"] = &Tracked{UID: "uid-old", Node: "n0", DeletedAt: now.Add(-20 * time.Minute)}
	mem.Refused["m2"] = Refusal{UID: "uid-m2", At: now.Add(-time.Minute), Detail: "delete failed: forbidden"}
	before := &Memory{Since: mem.Since, LastHeal: maps.Clone(mem.LastHeal), Tracked: map[string]*Tracked{"old": ptr(*mem.Tracked["old"])},
		Unsure: map[string]*Tracked{}, Refused: maps.Clone(mem.Refused)}
	machines := []Machine{machine("m2", "workers", "n2"), machine("m1", "workers", "n1")}
	o := Observed{
		Machines: machines,
		Nodes:    nodesOf(notReady("n1", now.Add(-time.Hour)), notReady("n2", now.Add(-time.Hour))),
		MDs:      workerPools("workers"),
	}
	Decide(o, with(policy(), func(p *Policy) { p.Cooldown = 0 }), mem, now)
	if !reflect.DeepEqual(mem, before) {
		t.Errorf("Decide changed memory\n got: %+v\nwant: %+v", mem, before)
	}
	same(t, "machines", machines, []Machine{machine("m2", "workers", "n2"), machine("m1", "workers", "n1")})
}

// The actor touches only pools the document names: a dead worker of any
// other pool is refused, and still counts toward the storm brake.
func TestHeal_MachineOfAPoolTheDocumentDoesNotNameIsRefused(t *testing.T) {
	o := Observed{
		Machines: []Machine{machine("m1", "unnamed", "n1")},
		Nodes:    nodesOf(Node{Name: "n1", Ready: ReadyFalse, Since: now.Add(-5 * time.Minute)}),
		MDs:      map[string]MD{"unnamed": {}},
	}
	d := Decide(o, policy(), NewMemory(now.Add(-time.Hour)), now)
	if len(d.Steps) != 1 || d.Steps[0].Delete != nil || d.Steps[0].Action.Status != "failed" ||
		!strings.Contains(d.Steps[0].Action.Detail, "not among the desired state's workerPools") ||
		strings.Contains(d.Steps[0].Action.Detail, "past the first") {
		t.Fatalf("steps %+v, want one refusal naming the workerPools, and no cut the document did not reach", d.Steps)
	}
	if !d.Keep["m1"] {
		t.Error("the refused candidate is not kept")
	}
}

// TestHeal_StormBrakeCountsEveryNotReadyWorkerAcrossPasses: a zone of four
// one-worker pools goes dark with maxUnhealthy 3, its Ready transitions a
// few seconds apart, so a pass can find two Nodes past the window and two
// still in it; a pass later, the first two are deleting and still down.
// Counting only the Nodes past their window and not yet deleting, the
// first pass deleted two and the next one more. Every NotReady worker
// counts, so both passes are a storm of 4; a zone with only two workers
// down heals both (the control).
func TestHeal_StormBrakeCountsEveryNotReadyWorkerAcrossPasses(t *testing.T) {
	past, inWindow := now.Add(-5*time.Minute), now.Add(-50*time.Second)
	pools := workerPools("pool-a", "pool-b", "pool-c", "pool-z")
	ma, mb := machine("m-a", "pool-a", "n-a"), machine("m-b", "pool-b", "n-b")
	mc, mz := machine("m-c", "pool-c", "n-c"), machine("m-z", "pool-z", "n-z")
	storm := "unhealthy count 4 exceeds maxUnhealthy 3 — refusing (possible outage)"
	tests := []struct {
		name      string
		o         Observed
		wantStorm bool
		deletes   int
	}{
		{
			name:      "two past the window, two in it",
			o:         Observed{Machines: []Machine{ma, mb, mc, mz}, Nodes: nodesOf(notReady("n-a", past), notReady("n-b", past), notReady("n-c", inWindow), unknown("n-z", inWindow)), MDs: pools},
			wantStorm: true,
		},
		{
			name:      "two deleting and still down, two past the window",
			o:         Observed{Machines: []Machine{deleting(ma), deleting(mb), mc, mz}, Nodes: nodesOf(notReady("n-a", past), notReady("n-b", past), notReady("n-c", past), notReady("n-z", past)), MDs: pools},
			wantStorm: true,
		},
		{
			name:    "control: two down, two Ready",
			o:       Observed{Machines: []Machine{ma, mb, mc, mz}, Nodes: nodesOf(notReady("n-a", past), notReady("n-b", past), ready("n-c"), ready("n-z")), MDs: pools},
			deletes: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := with(policy(), func(p *Policy) { p.MaxUnhealthy = 3; p.Cooldown = 0 })
			d := Decide(tt.o, p, oldMemory(), now)
			if d.Storm != tt.wantStorm || deletes(d) != tt.deletes {
				t.Fatalf("storm %v with %d deletes, want storm %v with %d: %s", d.Storm, deletes(d), tt.wantStorm, tt.deletes, decisionString(d))
			}
			for _, st := range d.Steps {
				if tt.wantStorm && st.Action.Detail != storm {
					t.Errorf("%s: detail %q, want %q", st.Action.Target, st.Action.Detail, storm)
				}
			}
		})
	}
}

// The brake counts workers that are down: a Node that has posted no Ready
// condition yet (just registered), a control-plane Node, and the Node of a
// control-plane Machine that machine-controller has not linked yet are not
// counted. With one candidate and maxUnhealthy 1, any of them counted
// would trip the brake; one more NotReady worker does (the control).
func TestHeal_StormBrakeCountsOnlyWorkersThatAreDown(t *testing.T) {
	past := now.Add(-5 * time.Minute)
	cpUnlinked := controlPlane(joinless("cp-m", "workers", now.Add(-time.Hour)))
	cpNode := Node{Name: "cp-m", Ready: ReadyFalse, Since: past} // named after its Machine, no nodeRef yet
	for _, tc := range []struct {
		name  string
		extra []Node
		storm bool
	}{
		{"a Node without a Ready condition", []Node{{Name: "fresh"}}, false},
		{"a control-plane Node", []Node{{Name: "cp-1", ControlPlane: true, Ready: ReadyFalse, Since: past}}, false},
		{"the unlinked Node of a control-plane Machine", []Node{cpNode}, false},
		{"control: another NotReady worker", []Node{notReady("other", past)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Observed{
				Machines: []Machine{machine("m1", "workers", "n1"), cpUnlinked},
				Nodes:    nodesOf(append([]Node{notReady("n1", past)}, tc.extra...)...),
				MDs:      workerPools("workers"),
			}
			d := Decide(o, with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }), oldMemory(), now)
			if d.Storm != tc.storm {
				t.Errorf("storm %v, want %v: %s", d.Storm, tc.storm, decisionString(d))
			}
		})
	}
}

// TestHeal_NotReadyNodesInTheirWindowAloneMakeNoStorm: Nodes still in their
// window (workers joining a scale-up are NotReady for a while) count toward
// a storm but hold nothing back on their own, so no storm is reported.
func TestHeal_NotReadyNodesInTheirWindowAloneMakeNoStorm(t *testing.T) {
	inWindow := now.Add(-30 * time.Second)
	o := Observed{
		Machines: []Machine{machine("m1", "workers", "n1"), machine("m2", "workers", "n2")},
		Nodes:    nodesOf(notReady("n1", inWindow), notReady("n2", inWindow)),
		MDs:      workerPools("workers"),
	}
	d := Decide(o, with(policy(), func(p *Policy) { p.MaxUnhealthy = 1 }), oldMemory(), now)
	sameDecision(t, d, Decision{Keep: keep()})
}

// Settle turns the lost answer of a delete into done once a read shows the
// Machine deleting or gone (a Machine of that name with another UID is a
// replacement: the one deleted is gone), and forgets one still there and
// not deleting (the control), whose failed report stands.
func TestMemory_SettleReportsALostDeleteThatLandedAsDone(t *testing.T) {
	mem := NewMemory(now.Add(-time.Hour))
	for _, name := range []string{"deleting", "gone", "replaced", "standing"} {
		mem.Unsure[name] = &Tracked{UID: types.UID("uid-" + name), Cause: "node n NotReady"}
	}
	m := func(name string, uid types.UID, deleting bool) Machine {
		x := machine(name, "workers", "n-"+name)
		x.UID, x.Deleting = uid, deleting
		return x
	}
	o := Observed{Machines: []Machine{
		m("deleting", "uid-deleting", true), m("replaced", "uid-new", false), m("standing", "uid-standing", false),
	}}
	got := mem.Settle(o, 7)
	var targets []string
	for _, a := range got {
		if a.Status != wire.StatusDone || !strings.Contains(a.Detail, "answer was lost (node n NotReady)") || a.Revision != 7 {
			t.Errorf("report %+v, want done naming the lost answer and the cause", a)
		}
		targets = append(targets, a.Target)
	}
	if want := []string{"deleting", "gone", "replaced"}; !reflect.DeepEqual(targets, want) {
		t.Errorf("settled %v, want %v", targets, want)
	}
	if len(mem.Unsure) != 0 {
		t.Errorf("unsure after a read settled every one: %v", mem.Unsure)
	}
}
