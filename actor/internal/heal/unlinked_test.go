package heal

import (
	"strings"
	"testing"
	"time"

	k8stypes "k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

// byMarks is n bearing machine-controller's marks for a Machine.
func byMarks(n Node, uid, machine string) Node {
	n.OwnerUID, n.OwnerMachine = k8stypes.UID(uid), machine
	return n
}

func TestHeal_UnlinkedMachineIsJudgedByTheNodeBearingItsMarks(t *testing.T) {
	old := now.Add(-time.Hour) // past the 600 s startup window
	down := now.Add(-5 * time.Minute)
	j := joinless("j1", "workers", old)
	waiting := func(node, mark, state string) Unlinked {
		return Unlinked{Machine: "j1", Detail: "waiting: Machine has no status.nodeRef, but node " + node + " (" + mark +
			") has joined and is " + state + "; not deleting a server that may be working before machine-controller links them"}
	}
	tests := []struct {
		name         string
		m            Machine
		nodes        map[string]Node
		want         []Candidate
		wantUnbacked []string
		wantUnlinked []Unlinked
	}{
		{
			name:         "a Ready Node named after it",
			m:            j,
			nodes:        nodesOf(ready("j1")),
			wantUnlinked: []Unlinked{waiting("j1", "named after it", "Ready")},
		},
		{
			name:         "a Ready Node with its UID",
			m:            j,
			nodes:        nodesOf(byMarks(ready("hz-1"), "uid-j1", "")),
			wantUnlinked: []Unlinked{waiting("hz-1", "its UID in label machine-controller/owned-by", "Ready")},
		},
		{
			name:         "a Ready Node with its namespace/name",
			m:            j,
			nodes:        nodesOf(byMarks(ready("hz-1"), "", testNS+"/j1")),
			wantUnlinked: []Unlinked{waiting("hz-1", "annotation cluster.k8s.io/machine", "Ready")},
		},
		{
			name:         "one of its Nodes dead and one Ready: the Ready one holds it back",
			m:            j,
			nodes:        nodesOf(byMarks(notReady("hz-1", down), "uid-j1", ""), byMarks(ready("hz-2"), "", testNS+"/j1")),
			wantUnlinked: []Unlinked{waiting("hz-2", "annotation cluster.k8s.io/machine", "Ready")},
		},
		{
			name:  "its only Node down for unhealthyAfter: a candidate behind that Node, never also unbacked",
			m:     j,
			nodes: nodesOf(byMarks(unknown("hz-1", down), "uid-j1", "")),
			want:  []Candidate{{Machine: j, Node: "hz-1", Since: down, Cause: "node hz-1 Unknown for 5m0s (unhealthyAfter 1m0s)"}},
		},
		{
			name:  "within its startup window nothing is said, whatever its Node",
			m:     joinless("j1", "workers", now.Add(-599*time.Second)),
			nodes: nodesOf(ready("j1")),
		},
		{
			name:  "a control-plane Node bearing its marks is skipped silently",
			m:     j,
			nodes: nodesOf(byMarks(Node{Name: "hz-1", ControlPlane: true, Ready: ReadyTrue, Since: down}, "uid-j1", "")),
		},
		{
			name:  "a deleting Machine's Node is neither a candidate nor unbacked",
			m:     deleting(j),
			nodes: nodesOf(byMarks(notReady("hz-1", down), "uid-j1", "")),
		},
		{
			name:         "marks for another namespace or UID tie nothing: it never joined, and the Node is unbacked",
			m:            j,
			nodes:        nodesOf(byMarks(notReady("hz-1", down), "uid-j9", "other/j1")),
			want:         []Candidate{{Machine: j, Cause: "no node joined within 1h0m0s of creation (nodeStartupTimeout 10m0s)"}},
			wantUnbacked: []string{"hz-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unbacked, unlinked := Detect(Observed{Namespace: testNS, Machines: []Machine{tt.m}, Nodes: tt.nodes}, policy(), now)
			want := tt.want
			if want == nil {
				want = []Candidate{}
			}
			same(t, "candidates", got, want)
			same(t, "unbacked", unbacked, tt.wantUnbacked)
			same(t, "unlinked", unlinked, tt.wantUnlinked)
		})
	}
}

// An Unlinked Machine is reported in name order among the candidates, and
// counts toward neither the storm brake nor the budget.
func TestHeal_UnlinkedMachineIsReportedButNeverCounted(t *testing.T) {
	down := now.Add(-5 * time.Minute)
	o := Observed{
		Namespace: testNS,
		Machines:  []Machine{machine("a1", "workers", "n1"), joinless("b1", "workers", now.Add(-time.Hour)), machine("c1", "workers", "n3")},
		Nodes:     nodesOf(notReady("n1", down), byMarks(ready("hz-b"), "uid-b1", ""), notReady("n3", down)),
		MDs:       workerPools("workers"),
	}
	p := with(policy(), func(p *Policy) { p.MaxUnhealthy, p.Cooldown = 2, 0 })
	d := Decide(o, p, oldMemory(), now)
	wait := final("b1", wire.StatusPending, "waiting: Machine has no status.nodeRef, but node hz-b (its UID in label machine-controller/owned-by) "+
		"has joined and is Ready; not deleting a server that may be working before machine-controller links them")
	sameDecision(t, d, Decision{
		Steps: []Step{
			healing(machine("a1", "workers", "n1"), "n1", down, nodeCause("n1", "NotReady", "5m0s", "1m0s")),
			wait,
			healing(machine("c1", "workers", "n3"), "n3", down, nodeCause("n3", "NotReady", "5m0s", "1m0s")),
		},
		Keep:     keep("a1", "b1", "c1"),
		InFlight: 2,
	})

	p.MaxUnhealthy = 1
	storm := "unhealthy count 2 exceeds maxUnhealthy 1 — refusing (possible outage)"
	sameDecision(t, Decide(o, p, oldMemory(), now), Decision{
		Steps: []Step{final("a1", wire.StatusFailed, storm), wait, final("c1", wire.StatusFailed, storm)},
		Keep:  keep("a1", "b1", "c1"),
		Storm: true,
	})
}

// A Node another Machine's nodeRef names is that Machine's: a stale owner
// label on it (an address reused by a new server) neither holds back a
// Machine that never joined nor makes it a candidate behind that Node.
func TestHeal_AStaleMarkOnAnotherMachinesNodeTiesNothing(t *testing.T) {
	j := joinless("j1", "workers", now.Add(-time.Hour))
	for _, n := range []Node{ready("n0"), notReady("n0", now.Add(-5*time.Minute))} {
		o := Observed{Namespace: testNS, Machines: []Machine{machine("m0", "workers", "n0"), j},
			Nodes: nodesOf(byMarks(n, "uid-j1", testNS+"/j1"))}
		got, _, unlinked := Detect(o, policy(), now)
		var joinlessJ1 bool
		for _, c := range got {
			joinlessJ1 = joinlessJ1 || c.Machine.Name == "j1" && c.Node == "" && strings.HasPrefix(c.Cause, "no node joined")
		}
		if !joinlessJ1 || len(unlinked) != 0 {
			t.Errorf("node %s: candidates %+v, unlinked %+v; want j1 a joinless candidate", n.Ready, got, unlinked)
		}
	}
}
