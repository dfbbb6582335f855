package execute_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

// machine-controller writes a Machine's status.nodeRef some time after the
// Node joined; until then the Node names its Machine by machine-controller's
// own marks. A Machine past its startup window whose Node has joined and is
// Ready is a working server behind a lagging controller, not a machine
// that never joined: it is reported, never deleted.
func TestHeal_JoinlessMachineWhoseNodeIsReadyIsNotDeleted(t *testing.T) {
	down := start.Add(-10 * time.Minute)
	cases := []struct {
		name        string
		node        *cluster.Node
		wantDeletes int
		want        report
	}{
		{
			name: "a control: no Node of its own, so it never joined and is replaced",
			node: node("somebody-else", "True", down), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "no node joined|recreates"},
		},
		{
			name: "its Node carries its name",
			node: node("pool-a-m1", "True", down),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1|Ready|machine-controller"},
		},
		{
			name: "its Node carries its UID in machine-controller/owned-by",
			node: marked(node("hz-4711", "True", down), "uid-pool-a-m1", ""),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|hz-4711|Ready|owned-by"},
		},
		{
			name: "its Node carries its namespace/name in cluster.k8s.io/machine",
			node: marked(node("hz-4711", "True", down), "", mdNamespace+"/pool-a-m1"),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|hz-4711|Ready|cluster.k8s.io/machine"},
		},
		{
			name: "a control: marks naming another Machine tie nothing to it",
			node: marked(node("hz-4711", "True", down), "uid-pool-a-m9", "other-ns/pool-a-m1"), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "no node joined|recreates"},
		},
		{
			name: "a Node named after it that has no Ready condition yet is still joining",
			node: node("pool-a-m1", "", time.Time{}),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1"},
		},
		{
			name: "a Node named after it NotReady for less than unhealthyAfter",
			node: node("pool-a-m1", "False", start.Add(-299*time.Second)),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1|NotReady"},
		},
		{
			name: "a Node named after it and down for unhealthyAfter is judged as its node",
			node: node("pool-a-m1", "Unknown", start.Add(-300*time.Second)), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "node pool-a-m1 Unknown for 5m0s|recreates"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, poolMD("pool-a", 1))
			h.world.add(joinless("pool-a-m1", "pool-a", time.Hour))
			h.world.addNodes(tc.node)
			h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
			if n := len(h.world.machineDeletes); n != tc.wantDeletes {
				t.Errorf("%d machine deletes %+v, want %d", n, h.world.machineDeletes, tc.wantDeletes)
			}
			checkTyped(t, tc.name, wire.ActionHeal, h.store.Snapshot(), []report{tc.want})
		})
	}
}

// marked is n bearing machine-controller's marks: uid in the owned-by
// label, machine ("namespace/name") in the machine annotation.
func marked(n *cluster.Node, uid types.UID, machine string) *cluster.Node {
	n.OwnerUID, n.OwnerMachine = uid, machine
	return n
}
