package scale

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Removes is what healing counts as in flight after a scale patch of the
// same pass: the drop in replicas, only for a patch that was sent and may
// have landed; from a count that could not be read, unknown.
func TestPatch_Removes(t *testing.T) {
	mds := schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}
	from := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name      string
		from      *int64
		to        int64
		sent      bool
		err       error
		want      int
		wantKnown bool
	}{
		{"a scale-down that landed", from(5), 2, true, nil, 3, true},
		{"a scale-up", from(2), 5, true, nil, 0, true},
		{"no change", from(3), 3, true, nil, 0, true},
		{"from an unknown count", nil, 0, true, nil, 0, false},
		{"from an unknown count, no answer", nil, 0, true, context.DeadlineExceeded, 0, false},
		{"from an unknown count, refused", nil, 0, true, apierrors.NewForbidden(mds, "pool-a", errors.New("denied")), 0, true},
		{"held back by the fence", from(5), 2, false, errors.New("lost lease"), 0, true},
		{"no answer", from(5), 2, true, context.DeadlineExceeded, 3, true},
		{"a server error", from(5), 2, true, apierrors.NewInternalError(errors.New("etcd")), 3, true},
		{"a server-side timeout", from(5), 2, true, apierrors.NewTimeoutError("slow", 1), 3, true},
		{"forbidden", from(5), 2, true, apierrors.NewForbidden(mds, "pool-a", errors.New("denied")), 0, true},
		{"a conflict", from(5), 2, true, apierrors.NewConflict(mds, "pool-a", errors.New("changed")), 0, true},
		{"refused by a webhook", from(5), 2, true, apierrors.NewBadRequest("denied"), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Patch{From: tc.from, To: tc.to}
			if got, known := p.Removes(tc.sent, tc.err); got != tc.want || known != tc.wantKnown {
				t.Errorf("Removes = %d, %t; want %d, %t", got, known, tc.want, tc.wantKnown)
			}
		})
	}
}

// From a count that could not be read, a scale-down to N removes every live
// Machine of the pool past N: machine-controller, once the count reads
// again, scales the pool's Machines to it.
func TestPatch_RemovesOfAnUnreadCountIsEveryLiveMachinePastTheNewCount(t *testing.T) {
	for _, tc := range []struct {
		to         int64
		live, want int
	}{{1, 4, 3}, {0, 4, 4}, {4, 4, 0}, {6, 4, 0}, {0, 0, 0}} {
		if got := (Patch{To: tc.to}).RemovesOf(tc.live); got != tc.want {
			t.Errorf("to %d with %d live: RemovesOf = %d, want %d", tc.to, tc.live, got, tc.want)
		}
	}
}
