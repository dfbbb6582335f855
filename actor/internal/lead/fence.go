package lead

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Fence confirms, immediately before each write, that this process still
// leads and that the actor's own Deployment still stands.
type Fence struct {
	client     kubernetes.Interface
	namespace  string
	name       string // the Lease
	deployment string // the actor's own Deployment: the kill switch
	identity   string
	killed     atomic.Bool
	now        func() time.Time

	tripOnce sync.Once
	tripped  chan struct{} // closed when a write found the Deployment gone
}

func newFence(client kubernetes.Interface, namespace, lease, deployment, identity string) *Fence {
	return &Fence{client: client, namespace: namespace, name: lease, deployment: deployment, identity: identity,
		now: time.Now, tripped: make(chan struct{})}
}

// Tripped closes when a write found the actor's Deployment deleted or being
// deleted: the kill switch, seen on the write path even when the
// KillSwitch's watch lags behind.
func (f *Fence) Tripped() <-chan struct{} { return f.tripped }

// Write returns a context for one write. It fails unless the Lease, read
// fresh from the apiserver, names this process as holder with a renewal
// that lasts more than SafetyMargin longer, and the actor's Deployment, read
// fresh within the same deadline, exists and is not being deleted. The
// deadline ends SafetyMargin before the lease could expire and always within
// WriteDeadline; DeadlineTransport refuses to send a request past it, so a
// leader frozen between this check and its request does not send it in a
// successor's term (one frozen inside the transport, past its own check,
// does: see DeadlineTransport).
func (f *Fence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.killed.Load() {
		return nil, nil, ErrKilled
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	deadline, err := f.leaseDeadline(ctx)
	if err != nil {
		return nil, nil, err
	}
	// From here the window is a duration: the Lease's end is wall-clock
	// time, and a deadline built from now.Add carries now's monotonic
	// reading, so the write's context runs out by elapsed time.
	now := f.now()
	left, err := termBound(ctx, deadline.Sub(now), now)
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithDeadline(ctx, now.Add(left))
	if err := f.deploymentStands(wctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return wctx, cancel, nil
}

// ConfirmRetry is how long Confirm waits before reading again after a read
// failed.
const ConfirmRetry = 2 * time.Second

// Confirm waits until the fence's live reads show this term and the
// Deployment standing, as a write's would, before a term starts its work.
// A read that fails (a 5xx, a slow apiserver) is tried again every
// ConfirmRetry for as long as ctx lasts, which is the term: returning it
// would end the term, and the process with it, so a flaky apiserver would
// keep both replicas restarting. A lost lease or the kill switch ends it at
// once.
func (f *Fence) Confirm(ctx context.Context, retrying func(error)) error {
	for {
		_, done, err := f.Write(ctx)
		switch {
		case err == nil:
			done()
			return nil
		case errors.Is(err, ErrLostLease), errors.Is(err, ErrKilled), ctx.Err() != nil:
			return err
		}
		retrying(err)
		t := time.NewTimer(ConfirmRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// leaseDeadline reads the Lease and returns the latest instant a write may
// still be in flight.
func (f *Fence) leaseDeadline(ctx context.Context) (time.Time, error) {
	getCtx, cancel := context.WithTimeout(ctx, WriteDeadline)
	lease, err := f.client.CoordinationV1().Leases(f.namespace).Get(getCtx, f.name, metav1.GetOptions{})
	cancel()
	if err != nil {
		return time.Time{}, unconfirmed{what: "lease", err: err}
	}
	return writeDeadline(lease.Spec, f.identity, f.now())
}

// writeDeadline decides, from the Lease as read and the time now, until
// when identity may have a write in flight: SafetyMargin before the lease
// could expire and at most WriteDeadline from now. It refuses when the
// Lease names another holder, carries no renewal, or has less than
// SafetyMargin left.
func writeDeadline(spec coordinationv1.LeaseSpec, identity string, now time.Time) (time.Time, error) {
	if spec.HolderIdentity == nil || *spec.HolderIdentity != identity {
		return time.Time{}, fmt.Errorf("%w: the lease is held by %q", ErrLostLease, deref(spec.HolderIdentity))
	}
	if spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return time.Time{}, fmt.Errorf("%w: the lease carries no renewal", ErrLostLease)
	}
	expires := spec.RenewTime.Add(time.Duration(*spec.LeaseDurationSeconds) * time.Second)
	safeEnd := expires.Add(-SafetyMargin)
	if !now.Before(safeEnd) {
		return time.Time{}, fmt.Errorf("%w: the last renewal expires at %s, within the %s safety margin",
			ErrLostLease, expires.UTC().Format(time.RFC3339), SafetyMargin)
	}
	if deadline := now.Add(WriteDeadline); deadline.Before(safeEnd) {
		return deadline, nil
	}
	return safeEnd, nil
}

// termBound caps left, the time the Lease leaves a write, by the term's own
// reckoning. The Lease's renewTime is wall-clock time, so a clock stepped
// back after a renewal stretches the window writeDeadline gives; the term
// stamped that renewal on the monotonic clock when it sent it, and a
// successor can take over no sooner than LeaseDuration after it landed. So
// a write of the term ends SafetyMargin before that too, and none starts
// past it. A context without a term (tests of the fence alone) keeps left.
func termBound(ctx context.Context, left time.Duration, now time.Time) (time.Duration, error) {
	t, ok := termOf(ctx)
	if !ok {
		return left, nil
	}
	sent := t.renewSent.Load()
	if sent == nil {
		return 0, fmt.Errorf("%w: this term never held the lease", ErrLostLease)
	}
	termLeft := sent.Add(LeaseDuration - SafetyMargin).Sub(now)
	if termLeft <= 0 {
		return 0, fmt.Errorf("%w: this term's last renewal was sent %s ago", ErrLostLease,
			now.Sub(*sent).Truncate(time.Millisecond))
	}
	return min(left, termLeft), nil
}

// deploymentStands reads the actor's own Deployment under the write's
// deadline. Gone or being deleted fences this process for good.
func (f *Fence) deploymentStands(ctx context.Context) error {
	d, err := f.client.AppsV1().Deployments(f.namespace).Get(ctx, f.deployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && d.DeletionTimestamp != nil {
		f.killed.Store(true)
		f.tripOnce.Do(func() { close(f.tripped) })
		return fmt.Errorf("%w: Deployment %s/%s", ErrKilled, f.namespace, f.deployment)
	}
	if err != nil {
		return unconfirmed{what: "actor Deployment", err: err}
	}
	return nil
}

// unconfirmed is the fence's own read failing: nothing was sent. It quotes
// the read's error but does not unwrap to its status, so no caller takes
// the Lease's NotFound for "Machine already gone" or its Forbidden for a
// missing write permission. Only a cancelled or expired context shows
// through, which callers read as shutting down.
type unconfirmed struct {
	what string
	err  error
}

func (u unconfirmed) Error() string {
	return fmt.Sprintf("confirm the %s before writing: %v", u.what, u.err)
}

func (u unconfirmed) Is(target error) bool {
	return (target == context.Canceled || target == context.DeadlineExceeded) && errors.Is(u.err, target)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
