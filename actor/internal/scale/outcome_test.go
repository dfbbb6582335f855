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
// have landed.
func TestPatch_Removes(t *testing.T) {
	mds := schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}
	from := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name string
		from *int64
		to   int64
		sent bool
		err  error
		want int
	}{
		{"a scale-down that landed", from(5), 2, true, nil, 3},
		{"a scale-up", from(2), 5, true, nil, 0},
		{"no change", from(3), 3, true, nil, 0},
		{"from an unknown count", nil, 0, true, nil, 0},
		{"held back by the fence", from(5), 2, false, errors.New("lost lease"), 0},
		{"no answer", from(5), 2, true, context.DeadlineExceeded, 3},
		{"a server error", from(5), 2, true, apierrors.NewInternalError(errors.New("etcd")), 3},
		{"a server-side timeout", from(5), 2, true, apierrors.NewTimeoutError("slow", 1), 3},
		{"forbidden", from(5), 2, true, apierrors.NewForbidden(mds, "pool-a", errors.New("denied")), 0},
		{"a conflict", from(5), 2, true, apierrors.NewConflict(mds, "pool-a", errors.New("changed")), 0},
		{"refused by a webhook", from(5), 2, true, apierrors.NewBadRequest("denied"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Patch{From: tc.from, To: tc.to}
			if got := p.Removes(tc.sent, tc.err); got != tc.want {
				t.Errorf("Removes = %d, want %d", got, tc.want)
			}
		})
	}
}
