package execute

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/actor/internal/scale"
)

// takedowns.in, the count healing adds to the Machines deleting, as a table:
// in each pool, the larger of its live Machines past spec.replicas and what
// this pass's patches of it take down.
func TestTakedowns_CountPerPoolTheMorePastTheCountOrPatched(t *testing.T) {
	pool := func(name string, replicas *int64) *cluster.MachineDeployment {
		return &cluster.MachineDeployment{Name: name, Replicas: replicas,
			Selector: labels.SelectorFromSet(labels.Set{"pool": name})}
	}
	n := func(v int64) *int64 { return &v }
	machines := func(pool string, live, deleting int, sets ...string) []*cluster.Machine {
		var out []*cluster.Machine
		for i := range live + deleting {
			out = append(out, &cluster.Machine{Labels: map[string]string{"pool": pool}, MachineSets: sets, Deleting: i >= live})
		}
		return out
	}
	scaled := func(md string, from *int64, to int64) scale.Patch {
		return scale.Patch{MDPatch: refuse.MDPatch{MD: md}, From: from, To: to}
	}
	for _, tc := range []struct {
		name     string
		replicas *int64 // pool-a's; pool-b has 2 and 2 live Machines
		machines []*cluster.Machine
		t        takedowns
		want     int
	}{
		{"at its count", n(3), machines("pool-a", 3, 1), takedowns{}, 0},
		{"two live past the count; the deleting one is not", n(1), machines("pool-a", 3, 1), takedowns{}, 2},
		{"an unread count", nil, machines("pool-a", 3, 0), takedowns{}, 0},
		{"an unread count, a patch of it", nil, machines("pool-a", 3, 0),
			takedowns{scaled: []scale.Patch{scaled("pool-a", nil, 1)}}, 2},
		{"a negative count is 0", n(-1), machines("pool-a", 2, 0), takedowns{}, 2},
		{"a scale-down read as landed counts once", n(2), machines("pool-a", 3, 0),
			takedowns{scaled: []scale.Patch{scaled("pool-a", n(3), 2)}}, 1},
		{"a scale-up that did not land leaves the read's surplus", n(2), machines("pool-a", 3, 0),
			takedowns{scaled: []scale.Patch{scaled("pool-a", n(2), 3)}}, 1},
		{"a roll takes more than the surplus", n(2), machines("pool-a", 3, 0),
			takedowns{rolled: map[string]int{"pool-a": 2}}, 2},
		{"a roll and a scale-down of one pool add up", n(3), machines("pool-a", 3, 0),
			takedowns{rolled: map[string]int{"pool-a": 1}, scaled: []scale.Patch{scaled("pool-a", n(3), 2)}}, 2},
		{"a patched pool the read no longer shows", n(3), machines("pool-a", 3, 0),
			takedowns{rolled: map[string]int{"gone": 1}}, 1},
		// pool-b's MachineSet owns a Machine that pool-a's selector matches:
		// it counts for pool-b alone, which it puts past its count.
		{"a Machine counts under its MachineSet's pool", n(3),
			append(machines("pool-a", 3, 0), machines("pool-a", 1, 0, "pool-b-7d9f")...), takedowns{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(map[string]*cluster.MachineDeployment{"pool-a": pool("pool-a", tc.replicas), "pool-b": pool("pool-b", n(2))},
				append(tc.machines, machines("pool-b", 2, 0)...), nil)
			if got := tc.t.in(w); got != tc.want {
				t.Errorf("in = %d, want %d", got, tc.want)
			}
		})
	}
}
