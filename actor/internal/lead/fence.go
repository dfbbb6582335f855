package lead

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Fence confirms leadership immediately before a write.
type Fence struct {
	client    kubernetes.Interface
	namespace string
	name      string
	identity  string
	fenced    atomic.Bool
	now       func() time.Time
}

// Write returns a context for one write: it fails unless the Lease, read
// fresh from the apiserver, names this process as holder with a renewal
// still inside its duration, and its deadline ends before the lease could
// expire and always within WriteDeadline.
func (f *Fence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.fenced.Load() {
		return nil, nil, ErrFenced
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	getCtx, cancel := context.WithTimeout(ctx, WriteDeadline)
	lease, err := f.client.CoordinationV1().Leases(f.namespace).Get(getCtx, f.name, metav1.GetOptions{})
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("confirm the lease before writing: %w", err)
	}
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity != f.identity {
		return nil, nil, fmt.Errorf("%w: the lease is held by %q", ErrLostLease, deref(spec.HolderIdentity))
	}
	if spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return nil, nil, fmt.Errorf("%w: the lease carries no renewal", ErrLostLease)
	}
	now := time.Now()
	if f.now != nil {
		now = f.now()
	}
	expires := spec.RenewTime.Add(time.Duration(*spec.LeaseDurationSeconds) * time.Second)
	if !now.Before(expires) {
		return nil, nil, fmt.Errorf("%w: the last renewal expired at %s", ErrLostLease, expires.UTC().Format(time.RFC3339))
	}
	deadline := now.Add(WriteDeadline)
	if expires.Before(deadline) {
		deadline = expires
	}
	wctx, wcancel := context.WithDeadline(ctx, deadline)
	return wctx, wcancel, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
