// Package lead makes the actor act only while it is the one leader: it holds
// the Lease through client-go's leader election, fences every write with a
// fresh read of that Lease, and stops acting the moment the actor's own
// Deployment is deleted.
package lead

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease timings, in seconds of wall time. A standby takes over at most
// LeaseDuration after the leader stops renewing; the leader gives up when it
// could not renew for RenewDeadline; it retries every RetryPeriod. These are
// client-go's usual controller values: a dead actor is replaced within ~17 s,
// and a slow apiserver (a renew round-trip of seconds) does not flap the
// lease. WriteDeadline bounds every write well inside RenewDeadline, so a
// write can never outlive the term it was decided in.
//
// SafetyMargin is kept between the end of every write and the lease's
// expiry: a standby cannot take over before the expiry, so a write that
// ends SafetyMargin earlier has that long to be committed by the apiserver
// and to absorb clock skew between the nodes before a successor can act.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
	WriteDeadline = 5 * time.Second
	SafetyMargin  = 5 * time.Second
)

// ErrLostLease ends the process: a deposed leader never keeps working
// unfenced, it exits and starts over as a standby.
var ErrLostLease = errors.New("lost the actor lease")

// ErrKilled means the actor's Deployment is gone or going: acting stops for good.
var ErrKilled = errors.New("the actor Deployment is gone or being deleted")

// Config names the Lease, the actor's own Deployment and this process.
type Config struct {
	Client     kubernetes.Interface
	Namespace  string
	LeaseName  string
	Deployment string // deleting it is the kill switch
	Identity   string
	Log        *slog.Logger
	// Holder, if set, hears the Lease's holder ("" for none) every time the
	// elector reads or writes it (every RetryPeriod), on its goroutine.
	Holder func(string)
}

// Work is what the leader does; ctx ends when leadership or the process ends.
type Work func(ctx context.Context, f *Fence) error

// Run campaigns for the Lease until ctx or killed is done. While leading it
// runs work. It returns nil on a clean stop, ErrLostLease when the lease was
// lost, ErrKilled when killed closed, or work's error.
//
// A term ends in one order, whatever ends it: the work is stopped, then
// waited for, and only then does the elector stop, which releases the
// lease. No write can follow the release.
func Run(ctx context.Context, cfg Config, killed <-chan struct{}, work Work) error {
	t := newTerm(ctx)
	defer t.stop()
	fence := newFence(cfg.Client, cfg.Namespace, cfg.LeaseName, cfg.Deployment, cfg.Identity)
	// The elector must not see ctx end before the work has returned: with
	// ReleaseOnCancel it would release the lease while a write is in flight.
	// Only stopElecting ends it, after the work.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	lock := newRecordingLock(cfg, t, func() {
		// When renewal fails, client-go releases the lease before it cancels
		// the leading context; holding the release until the work has
		// returned keeps "no write after the release" true on that path too.
		if electCtx.Err() == nil {
			t.lose() // nobody asked to stop: the elector gave up after failed renewals
		}
		t.stop()
		t.wait()
	})
	le, err := leaderelection.NewLeaderElector(electionConfig(cfg, lock, func(leading context.Context) {
		if closed(killed) {
			t.stop() // killed while winning: never act
		}
		t.start(leading, func(ctx context.Context) error {
			cfg.Log.Info("Leading: acting on the desired state", "identity", cfg.Identity)
			return work(ctx, fence)
		})
		// The work ending, for any reason, ends the term; the release follows.
		t.wait()
		stopElecting()
	}))
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	// The kill switch or a stop ends the term from outside, in the stated order.
	go func() {
		select {
		case <-killed:
			cfg.Log.Warn("The actor Deployment is being deleted; stopping all acting now")
			fence.killed.Store(true)
		case <-fence.Tripped():
			cfg.Log.Warn("A write found the actor Deployment deleted; stopping all acting now")
		case <-ctx.Done():
		case <-electCtx.Done():
			return
		}
		t.stop()
		t.wait()
		stopElecting()
	}()

	le.Run(electCtx)
	// Not t.stop first: the elector has cancelled leading, and the term must
	// see that itself, so that a lost lease is told apart from work that
	// ended on its own.
	t.wait()
	return outcome(ctx, t, fence.killed.Load() || closed(killed))
}

// outcome is what Run returns once the term is over: the kill switch first,
// then a stop asked for, then a lost lease, then the work's own error.
func outcome(ctx context.Context, t *term, killed bool) error {
	switch {
	case killed:
		return ErrKilled
	case ctx.Err() != nil:
		return nil
	case t.lost.Load():
		return ErrLostLease
	case t.err != nil && !errors.Is(t.err, context.Canceled):
		return t.err
	}
	return nil
}

// newRecordingLock is the Lease lock for cfg's candidate, winning and
// renewing t; beforeRelease runs before the elector's release is sent.
func newRecordingLock(cfg Config, t *term, beforeRelease func()) *recordingLock {
	return &recordingLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.LeaseName},
			Client:     cfg.Client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
		},
		identity:      cfg.Identity,
		term:          t,
		now:           time.Now,
		beforeRelease: beforeRelease,
		onHolder:      cfg.Holder,
	}
}

// electionConfig is client-go's elector on lock, with the lease timings
// above; leading runs on the elector's goroutine once the lease is won.
func electionConfig(cfg Config, lock resourcelock.Interface, leading func(context.Context)) leaderelection.LeaderElectionConfig {
	return leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            cfg.LeaseName,
		LeaseDuration:   LeaseDuration,
		RenewDeadline:   RenewDeadline,
		RetryPeriod:     RetryPeriod,
		ReleaseOnCancel: true, // a clean stop frees the lease at once for the standby
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: leading,
			OnStoppedLeading: func() {},
		},
	}
}

// closed reports whether c is closed, without waiting. The kill-switch watcher
// may not have run yet when the elector wins or returns; the channel itself
// is the truth.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
