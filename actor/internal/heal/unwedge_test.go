package heal

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

// tracked is a machine this term heal-deleted from node at deletedAt.
func tracked(uid types.UID, node string, deletedAt time.Time) *Tracked {
	return &Tracked{UID: uid, Node: node, Cause: "node " + node + " NotReady for 5m0s (unhealthyAfter 1m0s)", DeletedAt: deletedAt}
}

func memoryTracking(ts map[string]*Tracked) *Memory {
	m := NewMemory(now.Add(-time.Hour))
	maps.Copy(m.Tracked, ts)
	return m
}

func TestHeal_DueFollowsTrackedMachines(t *testing.T) {
	const timeout = 300 * time.Second
	long := now.Add(-time.Hour)
	attempted := tracked("uid-m1", "n1", long)
	attempted.Attempted = true
	tests := []struct {
		name     string
		tracked  map[string]*Tracked
		o        Observed
		wantDrop []string
		wantDue  []string
	}{
		{
			name:     "machine gone is dropped",
			tracked:  map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:        Observed{Nodes: nodesOf(notReady("n1", long))},
			wantDrop: []string{"m1"},
		},
		{
			name:     "same name with another UID is a new machine: dropped",
			tracked:  map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:        Observed{Machines: []Machine{deleting(Machine{Name: "m1", UID: "uid-new", NodeName: "n1"})}, Nodes: nodesOf(notReady("n1", long))},
			wantDrop: []string{"m1"},
		},
		{
			// A deletionTimestamp is never taken back: a read that does not
			// show it yet lags the delete, and the tracking waits.
			name:    "present and not yet seen deleting is kept, not due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:       Observed{Machines: []Machine{machine("m1", "workers", "n1")}, Nodes: nodesOf(notReady("n1", long))},
		},
		{
			name:    "already attempted is neither",
			tracked: map[string]*Tracked{"m1": attempted},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(notReady("n1", long))},
		},
		{
			name:    "a joinless heal has nothing to unwedge",
			tracked: map[string]*Tracked{"j1": tracked("uid-j1", "", long)},
			o:       Observed{Machines: []Machine{deleting(joinless("j1", "workers", long))}},
		},
		{
			name:     "a joinless heal whose machine is gone is dropped",
			tracked:  map[string]*Tracked{"j1": tracked("uid-j1", "", long)},
			wantDrop: []string{"j1"},
		},
		{
			name:    "2 minutes after the delete is not due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", now.Add(-2*time.Minute))},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(notReady("n1", long))},
		},
		{
			name:    "1 s short of the timeout is not due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", now.Add(-300*time.Second+time.Second))},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(notReady("n1", long))},
		},
		{
			name:    "1ns short of the timeout is not due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", now.Add(-300*time.Second+time.Nanosecond))},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(notReady("n1", long))},
		},
		{
			name:    "exactly at the timeout is due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", now.Add(-300*time.Second))},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(notReady("n1", long))},
			wantDue: []string{"m1"},
		},
		{
			name:    "Unknown node past the timeout is due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(unknown("n1", long))},
			wantDue: []string{"m1"},
		},
		{
			name:    "node gone is neither due nor dropped",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}},
		},
		{
			name:    "node Ready again is not due",
			tracked: map[string]*Tracked{"m1": tracked("uid-m1", "n1", long)},
			o:       Observed{Machines: []Machine{deleting(machine("m1", "workers", "n1"))}, Nodes: nodesOf(ready("n1"))},
		},
		{
			name: "several at once come out sorted",
			tracked: map[string]*Tracked{
				"m3": tracked("uid-m3", "n3", long), "m1": tracked("uid-m1", "n1", long), "m2": tracked("uid-m2", "n2", long),
				"z-gone": tracked("uid-z", "nz", long), "a-gone": tracked("uid-a", "na", long), "k-gone": tracked("uid-k", "nk", long),
			},
			o: Observed{
				Machines: []Machine{deleting(machine("m2", "workers", "n2")), deleting(machine("m3", "workers", "n3")), deleting(machine("m1", "workers", "n1"))},
				Nodes:    nodesOf(notReady("n1", long), notReady("n2", long), unknown("n3", long)),
			},
			wantDrop: []string{"a-gone", "k-gone", "z-gone"},
			wantDue:  []string{"m1", "m2", "m3"},
		},
		{
			name: "untracked stuck machines are never due",
			o:    Observed{Machines: []Machine{deleting(machine("m9", "workers", "n9"))}, Nodes: nodesOf(notReady("n9", now.Add(-24*time.Hour)))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memoryTracking(tt.tracked)
			drop, due := Due(mem, tt.o, timeout, now)
			same(t, "drop", drop, tt.wantDrop)
			same(t, "due", due, tt.wantDue)
			same(t, "tracked after Due", mem.Tracked, memoryTracking(tt.tracked).Tracked)
		})
	}
}

func TestHeal_DueKeepsTheAttemptWhileTheNodeIsReady(t *testing.T) {
	mem := memoryTracking(map[string]*Tracked{"m1": tracked("uid-m1", "n1", now.Add(-10*time.Minute))})
	machines := []Machine{deleting(machine("m1", "workers", "n1"))}
	steps := []struct {
		name    string
		node    Node
		at      time.Time
		wantDue []string
	}{
		{name: "recovered node is not due", node: ready("n1"), at: now},
		{name: "still recovered a minute later", node: ready("n1"), at: now.Add(time.Minute)},
		{name: "the node goes Unknown later and it fires", node: unknown("n1", now.Add(90*time.Second)), at: now.Add(2 * time.Minute), wantDue: []string{"m1"}},
	}
	for _, s := range steps {
		drop, due := Due(mem, Observed{Machines: machines, Nodes: nodesOf(s.node)}, 300*time.Second, s.at)
		same(t, s.name+": drop", drop, []string(nil))
		same(t, s.name+": due", due, s.wantDue)
		if mem.Tracked["m1"].Attempted {
			t.Fatalf("%s: Due used up the attempt", s.name)
		}
	}
}

func pod(ns, name, node string, terminating bool) Pod {
	return Pod{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), NodeName: node, Terminating: terminating}
}

// manyPods makes n Terminating pods on node, given in reverse order, spread over
// two namespaces.
func manyPods(n int, node string) (in, sorted []Pod) {
	for _, ns := range []string{"a-ns", "b-ns"} {
		for i := range n / 2 {
			sorted = append(sorted, pod(ns, fmt.Sprintf("pod-%03d", i), node, true))
		}
	}
	if n%2 == 1 {
		sorted = append(sorted, pod("c-ns", "odd", node, true))
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		in = append(in, sorted[i])
	}
	return in, sorted
}

func TestHeal_StuckPicksOnlyTerminatingPodsOnTheNode(t *testing.T) {
	in150, sorted150 := manyPods(150, "dead")
	in100, sorted100 := manyPods(100, "dead")
	in101, sorted101 := manyPods(101, "dead")
	tests := []struct {
		name string
		pods []Pod
		want []Pod
	}{
		{name: "no pods", pods: nil, want: nil},
		{
			name: "only Terminating pods on the node, by namespace then name",
			pods: []Pod{
				pod("kube-system", "b", "dead", true),
				pod("default", "running", "dead", false),
				pod("default", "elsewhere", "alive", true),
				pod("default", "z", "dead", true),
				pod("kube-system", "a", "dead", true),
				pod("default", "unbound", "", true),
			},
			want: []Pod{pod("default", "z", "dead", true), pod("kube-system", "a", "dead", true), pod("kube-system", "b", "dead", true)},
		},
		{
			name: "nothing Terminating on the node",
			pods: []Pod{pod("default", "running", "dead", false), pod("default", "other", "alive", true)},
			want: nil,
		},
		{name: "exactly 100 are all kept", pods: in100, want: sorted100},
		{name: "101 are cut to the first 100", pods: in101, want: sorted101[:100]},
		{name: "150 are cut to the first 100 in order", pods: in150, want: sorted150[:100]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Stuck(tt.pods, "dead")
			same(t, "stuck", got, tt.want)
			if len(got) > 100 {
				t.Errorf("got %d pods, want at most 100", len(got))
			}
		})
	}
}

func TestHeal_UnwedgeReportsStayDone(t *testing.T) {
	tr := tracked("uid-m1", "node-x", now.Add(-6*time.Minute-29*time.Second))
	const cause = "node node-x NotReady for 5m0s (unhealthyAfter 1m0s)"
	tests := []struct {
		name  string
		got   wire.Action
		want  wire.Action
		words []string
		not   []string
	}{
		{
			name: "unwedged with none failed",
			got:  Unwedged("m1", tr, 2, 0, 0, now, testRev),
			want: report("m1", wire.StatusDone, "deleted Machine ("+cause+
				"); eviction unwedged after 6m29s: force-deleted 2 pod(s) stuck Terminating on unreachable node node-x"),
			words: []string{"unwedged", "2 pod(s)", "node-x"},
			not:   []string{"failed"},
		},
		{
			name: "unwedged with one failed",
			got:  Unwedged("m1", tr, 2, 1, 0, now, testRev),
			want: report("m1", wire.StatusDone, "deleted Machine ("+cause+
				"); eviction unwedged after 6m29s: force-deleted 2 pod(s) stuck Terminating on unreachable node node-x (1 failed)"),
			words: []string{"unwedged", "2 pod(s)", "node-x", " (1 failed)"},
		},
		{
			name: "unwedge forbidden",
			got:  UnwedgeForbidden("m1", tr, "delete", 0, now, testRev),
			want: report("m1", wire.StatusDone, "deleted Machine ("+cause+
				"); eviction unwedge forbidden after 6m29s (RBAC: deploy/actor's ClusterRole must grant delete on pods, or an admission policy); node node-x left to drain"),
			words: []string{"unwedge forbidden", "RBAC", "node-x"},
		},
		{
			name: "unwedge forbidden after some pods were force-deleted says how many",
			got:  UnwedgeForbidden("m1", tr, "delete", 2, now, testRev),
			want: report("m1", wire.StatusDone, "deleted Machine ("+cause+
				"); eviction unwedge forbidden after 6m29s, 2 pod(s) force-deleted before (RBAC: deploy/actor's ClusterRole must grant delete on pods, or an admission policy); node node-x left to drain"),
			words: []string{"unwedge forbidden", "2 pod(s) force-deleted before", "admission policy"},
		},
		{
			name: "unwedge forbidden on the pod read names the verb",
			got:  UnwedgeForbidden("m1", tr, "list", 0, now, testRev),
			want: report("m1", wire.StatusDone, "deleted Machine ("+cause+
				"); eviction unwedge forbidden after 6m29s (RBAC: deploy/actor's ClusterRole must grant list on pods, or an admission policy); node node-x left to drain"),
			words: []string{"unwedge forbidden", "RBAC", "grant list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same(t, "action", tt.got, tt.want)
			for _, w := range tt.words {
				if !strings.Contains(tt.got.Detail, w) {
					t.Errorf("detail %q lacks %q", tt.got.Detail, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(tt.got.Detail, w) {
					t.Errorf("detail %q has %q", tt.got.Detail, w)
				}
			}
		})
	}
}
