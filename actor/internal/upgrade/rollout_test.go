package upgrade

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The expectations follow machine-controller v1.65.0: its defaults
// (maxSurge 1, maxUnavailable 0), its rounding (maxUnavailable down,
// maxSurge up), one Machine when both come to 0, the cap at spec.replicas,
// and its scale-down of old MachineSets to spec.replicas minus
// maxUnavailable, which takes every Machine past spec.replicas too.
func TestRollout_UnavailableResolvesAsMachineControllerDoes(t *testing.T) {
	n := intstr.FromInt32
	pct := intstr.FromString
	bound := func(v intstr.IntOrString) *intstr.IntOrString { return &v }
	cases := []struct {
		name     string
		r        Rollout
		replicas *int64
		live     int
		want     int
	}{
		{"no strategy: surge 1, nothing down", Rollout{}, replicas(5), 5, 0},
		{"a count", Rollout{MaxUnavailable: bound(n(2))}, replicas(5), 5, 2},
		{"a percentage rounds down", Rollout{MaxUnavailable: bound(pct("30%"))}, replicas(10), 10, 3},
		{"a percentage under one Machine is none, with surge", Rollout{MaxUnavailable: bound(pct("10%"))}, replicas(5), 5, 0},
		{"both 0 lets one go", Rollout{MaxSurge: bound(n(0)), MaxUnavailable: bound(pct("10%"))}, replicas(5), 5, 1},
		{"a surge percentage rounds up, so not both 0", Rollout{MaxSurge: bound(pct("1%")), MaxUnavailable: bound(n(0))}, replicas(5), 5, 0},
		{"never more than replicas", Rollout{MaxUnavailable: bound(n(9))}, replicas(3), 3, 3},
		{"never more than live", Rollout{MaxUnavailable: bound(pct("100%"))}, replicas(6), 4, 4},
		{"an empty pool", Rollout{MaxUnavailable: bound(n(2))}, replicas(0), 0, 0},
		// machine-controller scales the old MachineSets down to replicas
		// minus maxUnavailable: a Machine past replicas goes too.
		{"the surge of an unfinished roll goes too", Rollout{}, replicas(3), 4, 1},
		{"past replicas, with maxUnavailable", Rollout{MaxUnavailable: bound(n(9))}, replicas(3), 7, 7},
		{"a pool scaled to 0 it has not emptied yet", Rollout{MaxUnavailable: bound(n(2))}, replicas(0), 3, 3},
		{"the explicit default type", Rollout{Type: "RollingUpdate", MaxUnavailable: bound(n(1))}, replicas(4), 4, 1},
		{"unknown replicas: every live Machine", Rollout{MaxUnavailable: bound(n(1))}, nil, 4, 4},
		{"an unknown type: every live Machine", Rollout{Type: "Recreate"}, replicas(4), 4, 4},
		{"an unreadable strategy: every live Machine", Rollout{Unreadable: true}, replicas(4), 4, 4},
		{"a string that is no percentage: every live Machine", Rollout{MaxUnavailable: bound(pct("2"))}, replicas(4), 4, 4},
		{"a negative count: every live Machine", Rollout{MaxUnavailable: bound(n(-1))}, replicas(4), 4, 4},
	}
	for _, tc := range cases {
		if got := tc.r.Unavailable(tc.replicas, tc.live); got != tc.want {
			t.Errorf("%s: Unavailable = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestPlan_TheRollCarriesWhatItMayTakeDown(t *testing.T) {
	machines := []Machine{
		joined("a-1", "pool-a", oldV), joined("a-2", "pool-a", oldV),
		{Name: "a-3", Pool: "pool-a", Kubelet: oldV, Deleting: true},
		// Claimed by two pools: owned by neither for the planner, but a
		// roll of either may take it down.
		{Name: "ab-1", Candidates: []string{"pool-a", "pool-b"}, Kubelet: oldV, NodeName: "node-ab-1"},
	}
	half, unreadable := worker("pool-a", oldV, 4), worker("pool-a", oldV, 4)
	down := intstr.FromString("50%")
	half.Rollout.MaxUnavailable = &down
	unreadable.Rollout.Unreadable = true
	for _, tc := range []struct {
		name string
		md   MD
		want int
	}{
		{"50% of 4 replicas", half, 2},
		{"an unreadable strategy: the 3 live Machines it could take down", unreadable, 3},
	} {
		o := Observed{MDs: mdsOf(tc.md), ControlPlane: cpV, Machines: machines}
		steps, _ := Plan(o, policyFor(newV, "pool-a"), RolledFrom{})
		if len(steps) != 1 || steps[0].Patch == nil {
			t.Fatalf("%s: steps = %+v, want one roll", tc.name, steps)
		}
		if got := steps[0].Patch.Unavailable; got != tc.want {
			t.Errorf("%s: Unavailable = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestPatch_RemovesWhatARollMayHaveStarted(t *testing.T) {
	p := Patch{Unavailable: 3}
	cases := []struct {
		name string
		sent bool
		err  error
		want int
	}{
		{"landed", true, nil, 3},
		{"no answer: may have landed", true, errors.New("context deadline exceeded"), 3},
		{"a 500: may have landed", true, apierrors.NewInternalError(errors.New("etcd")), 3},
		{"a 409: refused", true, apierrors.NewConflict(mdResource, "pool-a", errors.New("modified")), 0},
		{"the fence held it back", false, errors.New("fenced"), 0},
	}
	for _, tc := range cases {
		if got := p.Removes(tc.sent, tc.err); got != tc.want {
			t.Errorf("%s: Removes = %d, want %d", tc.name, got, tc.want)
		}
	}
}
