package heal

import (
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
)

func TestHeal_PolicyFloorsWindowsButNotCooldown(t *testing.T) {
	tests := []struct {
		name string
		h    desired.Healing
		want Policy
	}{
		{
			name: "zero windows are floored at 60 s and cooldown 0 stays 0",
			h:    desired.Healing{Enabled: true, MaxUnhealthy: 1},
			want: Policy{MaxUnhealthy: 1, UnhealthyAfter: 60 * time.Second, StartupTimeout: 60 * time.Second, Revision: 9},
		},
		{
			name: "windows below the floor are raised to 60 s",
			h:    desired.Healing{MaxUnhealthy: 2, UnhealthyAfterSeconds: 30, NodeStartupTimeoutSeconds: 59, CooldownSeconds: 5},
			want: Policy{MaxUnhealthy: 2, UnhealthyAfter: 60 * time.Second, StartupTimeout: 60 * time.Second, Cooldown: 5 * time.Second, Revision: 9},
		},
		{
			name: "exactly the floor is kept",
			h:    desired.Healing{MaxUnhealthy: 3, UnhealthyAfterSeconds: 60, NodeStartupTimeoutSeconds: 60, CooldownSeconds: 900},
			want: Policy{MaxUnhealthy: 3, UnhealthyAfter: 60 * time.Second, StartupTimeout: 60 * time.Second, Cooldown: 900 * time.Second, Revision: 9},
		},
		{
			name: "one second past the floor is kept",
			h:    desired.Healing{UnhealthyAfterSeconds: 61, NodeStartupTimeoutSeconds: 61},
			want: Policy{UnhealthyAfter: 61 * time.Second, StartupTimeout: 61 * time.Second, Revision: 9},
		},
		{
			name: "long windows pass through unchanged",
			h:    desired.Healing{MaxUnhealthy: 1000, UnhealthyAfterSeconds: 1800, NodeStartupTimeoutSeconds: 1_000_000, CooldownSeconds: 1_000_000},
			want: Policy{MaxUnhealthy: 1000, UnhealthyAfter: 1800 * time.Second, StartupTimeout: 1_000_000 * time.Second, Cooldown: 1_000_000 * time.Second, Revision: 9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same(t, "policy", PolicyFrom(tt.h, 9, noLimits), tt.want)
		})
	}
}

func TestHeal_DetectFindsUnhealthyWorkers(t *testing.T) {
	down5m := now.Add(-5 * time.Minute)
	m1 := machine("m1", "workers", "n1")
	m2 := machine("m2", "workers", "n2")
	m3 := machine("m3", "workers", "n3")
	tests := []struct {
		name         string
		o            Observed
		p            Policy
		want         []Candidate
		wantUnbacked []string
	}{
		{
			name: "NotReady worker past the window is a candidate",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", down5m))},
			p:    policy(),
			want: []Candidate{{Machine: m1, Node: "n1", Since: down5m, Cause: "node n1 NotReady for 5m0s (unhealthyAfter 1m0s)"}},
		},
		{
			name: "Unknown worker past the window says Unknown",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(unknown("n1", down5m))},
			p:    policy(),
			want: []Candidate{{Machine: m1, Node: "n1", Since: down5m, Cause: "node n1 Unknown for 5m0s (unhealthyAfter 1m0s)"}},
		},
		{
			name: "NotReady exactly unhealthyAfter is a candidate",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", now.Add(-60*time.Second)))},
			p:    policy(),
			want: []Candidate{{Machine: m1, Node: "n1", Since: now.Add(-60 * time.Second), Cause: "node n1 NotReady for 1m0s (unhealthyAfter 1m0s)"}},
		},
		{
			name: "NotReady 1ns short of unhealthyAfter is not",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", now.Add(-60*time.Second+time.Nanosecond)))},
			p:    policy(),
		},
		{
			name: "NotReady since a time in the future is not",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", now.Add(time.Hour)))},
			p:    policy(),
		},
		{
			name: "Ready worker is not",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(ready("n1"))},
			p:    policy(),
		},
		{
			name: "node with no Ready condition is skipped, not even unbacked",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(Node{Name: "n1", Since: down5m}, Node{Name: "bare", Since: down5m})},
			p:    policy(),
		},
		{
			name: "NotReady with zero lastTransitionTime is skipped, not even unbacked",
			o:    Observed{Machines: []Machine{m1}, Nodes: nodesOf(Node{Name: "n1", Ready: ReadyFalse}, Node{Name: "bare", Ready: ReadyUnknown})},
			p:    policy(),
		},
		{
			name: "control-plane node is skipped silently, machine or not",
			o: Observed{
				Machines: []Machine{m1},
				Nodes:    nodesOf(Node{Name: "n1", ControlPlane: true, Ready: ReadyFalse, Since: down5m}, Node{Name: "cp-bare", ControlPlane: true, Ready: ReadyUnknown, Since: down5m}),
			},
			p: policy(),
		},
		{
			name: "control-plane-labelled machine on a NotReady node is skipped, not unbacked",
			o:    Observed{Machines: []Machine{controlPlane(m1)}, Nodes: nodesOf(notReady("n1", down5m))},
			p:    policy(),
		},
		{
			name: "deleting machine is never a candidate and its node is not unbacked",
			o:    Observed{Machines: []Machine{deleting(m1)}, Nodes: nodesOf(notReady("n1", down5m))},
			p:    policy(),
		},
		{
			name: "a live machine backs the node even when a deleting one sorts first",
			o: Observed{
				Machines: []Machine{machine("b-live", "workers", "n1"), deleting(machine("a-old", "workers", "n1"))},
				Nodes:    nodesOf(notReady("n1", down5m)),
			},
			p:    policy(),
			want: []Candidate{{Machine: machine("b-live", "workers", "n1"), Node: "n1", Since: down5m, Cause: "node n1 NotReady for 5m0s (unhealthyAfter 1m0s)"}},
		},
		{
			name:         "NotReady worker with no Machine at all is unbacked",
			o:            Observed{Nodes: nodesOf(notReady("zeta", down5m), unknown("alpha", down5m), ready("healthy"))},
			p:            policy(),
			wantUnbacked: []string{"alpha", "zeta"},
		},
		{
			name: "unbacked node short of the window is not reported",
			o:    Observed{Nodes: nodesOf(notReady("n9", now.Add(-30*time.Second)))},
			p:    policy(),
		},
		{
			name: "machine whose node is not observed is neither candidate nor joinless",
			o:    Observed{Machines: []Machine{m1}},
			p:    policy(),
		},
		{
			name: "candidates sorted by machine name whatever the input order",
			o: Observed{
				Machines: []Machine{m3, m1, m2},
				Nodes:    nodesOf(notReady("n1", down5m), notReady("n2", down5m), notReady("n3", down5m)),
			},
			p: policy(),
			want: []Candidate{
				{Machine: m1, Node: "n1", Since: down5m, Cause: "node n1 NotReady for 5m0s (unhealthyAfter 1m0s)"},
				{Machine: m2, Node: "n2", Since: down5m, Cause: "node n2 NotReady for 5m0s (unhealthyAfter 1m0s)"},
				{Machine: m3, Node: "n3", Since: down5m, Cause: "node n3 NotReady for 5m0s (unhealthyAfter 1m0s)"},
			},
		},
		{
			name: "unowned machine is still a candidate (refused later)",
			o:    Observed{Machines: []Machine{machine("m1", "", "n1")}, Nodes: nodesOf(notReady("n1", down5m))},
			p:    policy(),
			want: []Candidate{{Machine: machine("m1", "", "n1"), Node: "n1", Since: down5m, Cause: "node n1 NotReady for 5m0s (unhealthyAfter 1m0s)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unbacked, _ := Detect(tt.o, tt.p, now)
			want := tt.want
			if want == nil {
				want = []Candidate{}
			}
			same(t, "candidates", got, want)
			same(t, "unbacked", unbacked, tt.wantUnbacked)
		})
	}
}

func TestHeal_DetectFindsJoinlessMachines(t *testing.T) {
	tests := []struct {
		name    string
		m       Machine
		timeout time.Duration
		want    []Candidate
	}{
		{
			name:    "exactly the startup timeout is a candidate",
			m:       joinless("j1", "workers", now.Add(-600*time.Second)),
			timeout: 600 * time.Second,
			want: []Candidate{{Machine: joinless("j1", "workers", now.Add(-600*time.Second)),
				Cause: "no node joined within 10m0s of creation (nodeStartupTimeout 10m0s)"}},
		},
		{
			name:    "1ns short of the startup timeout is not",
			m:       joinless("j1", "workers", now.Add(-600*time.Second+time.Nanosecond)),
			timeout: 600 * time.Second,
		},
		{
			name:    "well past the startup timeout reports its age",
			m:       joinless("j1", "workers", now.Add(-25*time.Minute)),
			timeout: 600 * time.Second,
			want: []Candidate{{Machine: joinless("j1", "workers", now.Add(-25*time.Minute)),
				Cause: "no node joined within 25m0s of creation (nodeStartupTimeout 10m0s)"}},
		},
		{
			name:    "zero creation time is never a candidate",
			m:       joinless("j1", "workers", time.Time{}),
			timeout: 60 * time.Second,
		},
		{
			name:    "creation time in the future is never a candidate",
			m:       joinless("j1", "workers", now.Add(time.Hour)),
			timeout: 60 * time.Second,
		},
		{
			name:    "created exactly now is not a candidate",
			m:       joinless("j1", "workers", now),
			timeout: 60 * time.Second,
		},
		{
			name:    "deleting joinless machine is never a candidate",
			m:       deleting(joinless("j1", "workers", now.Add(-time.Hour))),
			timeout: 600 * time.Second,
		},
		{
			name:    "control-plane-labelled joinless machine is skipped",
			m:       controlPlane(joinless("j1", "workers", now.Add(-time.Hour))),
			timeout: 600 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := with(policy(), func(p *Policy) { p.StartupTimeout = tt.timeout })
			got, unbacked, _ := Detect(Observed{Machines: []Machine{tt.m}}, p, now)
			want := tt.want
			if want == nil {
				want = []Candidate{}
			}
			same(t, "candidates", got, want)
			same(t, "unbacked", unbacked, []string(nil))
		})
	}
}

// The floors and knobs are checked through PolicyFrom, as the executor
// builds the policy, so a junk window can only slow healing down.
func TestHeal_DetectHonoursPolicyKnobs(t *testing.T) {
	tests := []struct {
		name      string
		h         desired.Healing
		machine   Machine
		node      *Node
		wantCause string // "" when nothing is a candidate
	}{
		{
			name:    "0 s window floored to 60 s leaves a node unhealthy 30 s untouched",
			h:       desired.Healing{MaxUnhealthy: 1},
			machine: machine("m1", "workers", "n1"),
			node:    ptr(notReady("n1", now.Add(-30*time.Second))),
		},
		{
			name:      "0 s window floored to 60 s heals at exactly 60 s",
			h:         desired.Healing{MaxUnhealthy: 1},
			machine:   machine("m1", "workers", "n1"),
			node:      ptr(notReady("n1", now.Add(-60*time.Second))),
			wantCause: "node n1 NotReady for 1m0s (unhealthyAfter 1m0s)",
		},
		{
			name:    "unhealthyAfter 1800 s defers a node down 5 minutes",
			h:       desired.Healing{MaxUnhealthy: 1, UnhealthyAfterSeconds: 1800},
			machine: machine("m1", "workers", "n1"),
			node:    ptr(notReady("n1", now.Add(-5*time.Minute))),
		},
		{
			name:    "unhealthyAfter 1800 s defers a node down 1ns short of 30 minutes",
			h:       desired.Healing{MaxUnhealthy: 1, UnhealthyAfterSeconds: 1800},
			machine: machine("m1", "workers", "n1"),
			node:    ptr(notReady("n1", now.Add(-1800*time.Second+time.Nanosecond))),
		},
		{
			name:      "unhealthyAfter 1800 s heals at exactly 30 minutes",
			h:         desired.Healing{MaxUnhealthy: 1, UnhealthyAfterSeconds: 1800},
			machine:   machine("m1", "workers", "n1"),
			node:      ptr(notReady("n1", now.Add(-1800*time.Second))),
			wantCause: "node n1 NotReady for 30m0s (unhealthyAfter 30m0s)",
		},
		{
			name:    "0 s startup timeout floored to 60 s leaves a machine 30 s old alone",
			h:       desired.Healing{MaxUnhealthy: 1},
			machine: joinless("j1", "workers", now.Add(-30*time.Second)),
		},
		{
			name:      "0 s startup timeout floored to 60 s heals a machine exactly 60 s old",
			h:         desired.Healing{MaxUnhealthy: 1},
			machine:   joinless("j1", "workers", now.Add(-60*time.Second)),
			wantCause: "no node joined within 1m0s of creation (nodeStartupTimeout 1m0s)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Observed{Machines: []Machine{tt.machine}, Nodes: map[string]Node{}}
			if tt.node != nil {
				o.Nodes = nodesOf(*tt.node)
			}
			got, _, _ := Detect(o, PolicyFrom(tt.h, testRev, noLimits), now)
			want := []Candidate{}
			if tt.wantCause != "" {
				c := Candidate{Machine: tt.machine, Cause: tt.wantCause}
				if tt.node != nil {
					c.Node, c.Since = tt.node.Name, tt.node.Since
				}
				want = append(want, c)
			}
			same(t, "candidates", got, want)
		})
	}
}

func TestHeal_DetectLeavesInputOrderAlone(t *testing.T) {
	in := []Machine{machine("m2", "workers", "n2"), machine("m1", "workers", "n1")}
	o := Observed{Machines: in, Nodes: nodesOf(notReady("n1", now.Add(-time.Hour)), notReady("n2", now.Add(-time.Hour)))}
	Detect(o, policy(), now)
	same(t, "machines after Detect", in, []Machine{machine("m2", "workers", "n2"), machine("m1", "workers", "n1")})
}

func TestHeal_StillUnhealthyRechecksTheFreshNode(t *testing.T) {
	since := now.Add(-5 * time.Minute)
	nodeDelete := &Delete{Machine: "m1", Node: "n1", NodeSince: since}
	tests := []struct {
		name  string
		d     *Delete
		fresh *Node
		want  bool
	}{
		{name: "joinless delete holds with no node", d: &Delete{Machine: "j1"}, want: true},
		{name: "joinless delete holds whatever node is passed", d: &Delete{Machine: "j1"}, fresh: ptr(ready("n1")), want: true},
		{name: "node gone", d: nodeDelete, fresh: nil, want: false},
		{name: "node Ready again", d: nodeDelete, fresh: &Node{Name: "n1", Ready: ReadyTrue, Since: since}, want: false},
		{name: "node lost its Ready condition", d: nodeDelete, fresh: &Node{Name: "n1", Since: since}, want: false},
		{name: "transition moved on (flapped)", d: nodeDelete, fresh: ptr(notReady("n1", since.Add(time.Second))), want: false},
		{name: "transition moved by 1ns", d: nodeDelete, fresh: ptr(notReady("n1", since.Add(time.Nanosecond))), want: false},
		{name: "same transition, NotReady", d: nodeDelete, fresh: ptr(notReady("n1", since)), want: true},
		{name: "same transition, Unknown", d: nodeDelete, fresh: ptr(unknown("n1", since)), want: true},
		{name: "same instant in another zone is the same transition", d: nodeDelete, fresh: ptr(notReady("n1", since.In(time.FixedZone("X", 3600)))), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StillUnhealthy(tt.d, tt.fresh); got != tt.want {
				t.Errorf("StillUnhealthy = %v, want %v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
