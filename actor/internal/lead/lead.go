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
	"sync/atomic"
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

// ErrFenced means the actor's Deployment is gone or going: acting stops for good.
var ErrFenced = errors.New("the actor Deployment is gone or being deleted")

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

// Run campaigns for the Lease until ctx or fenced is done. While leading it
// runs work. It returns nil on a clean stop, ErrLostLease when the lease was
// lost, ErrFenced when fenced closed, or work's error.
func Run(ctx context.Context, cfg Config, fenced <-chan struct{}, work Work) error {
	// acquired is set inside the elector, synchronously, the moment the lease
	// is won; the elector then starts OnStartedLeading on a goroutine of its
	// own, which Run must wait for before returning.
	var acquired, lost atomic.Bool
	t := &term{}
	lock := &recordingLock{
		identity: cfg.Identity,
		term:     t,
		now:      time.Now,
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.LeaseName},
			Client:     cfg.Client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
		},
		onEvent: func(e string) {
			if e == "became leader" {
				acquired.Store(true)
			}
		},
		onHolder: cfg.Holder,
	}
	var releasing func()
	// When renewal fails, client-go releases the lease before it cancels the
	// leading context; holding the release until the work has returned
	// keeps "no write after the release" true on that path as well.
	lock.beforeRelease = func() { releasing() }
	fence := newFence(cfg.Client, cfg.Namespace, cfg.LeaseName, cfg.Deployment, cfg.Identity)

	// The elector must not see ctx end before the work has returned: with
	// ReleaseOnCancel it would release the lease while a write is in flight.
	// Only stopElect ends it, after the work.
	electCtx, stopElect := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElect()
	workCtx, stopWork := context.WithCancel(withTerm(ctx, t))
	defer stopWork()

	var (
		workErr error // written before done is closed
		done    = make(chan struct{})
	)
	releasing = func() {
		if electCtx.Err() == nil {
			// Nobody asked to stop: the elector gave up after failed renewals.
			lost.Store(true)
		}
		stopWork()
		if acquired.Load() {
			<-done
		}
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            cfg.LeaseName,
		LeaseDuration:   LeaseDuration,
		RenewDeadline:   RenewDeadline,
		RetryPeriod:     RetryPeriod,
		ReleaseOnCancel: true, // a clean stop frees the lease at once for the standby
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				// The work ending, for any reason, ends the term; the release
				// follows it.
				defer stopElect()
				defer close(done)
				if workCtx.Err() != nil || closed(fenced) {
					return // fenced or stopped while winning: never act
				}
				cfg.Log.Info("Leading: acting on the desired state", "identity", cfg.Identity)
				// Leadership ending (a failed renew) stops the work too.
				go func() {
					select {
					case <-leading.Done():
						select {
						case <-done: // the work had already ended on its own
						default:
							lost.Store(true)
							stopWork()
						}
					case <-workCtx.Done():
					}
				}()
				workErr = work(workCtx, fence)
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	// Fencing: stop the work first and wait for it, then stop campaigning,
	// which releases the lease. No write can follow the release.
	go func() {
		select {
		case <-fenced:
			cfg.Log.Warn("The actor Deployment is being deleted; stopping all acting now")
			fence.fenced.Store(true)
		case <-fence.Gone():
			cfg.Log.Warn("A write found the actor Deployment deleted; stopping all acting now")
		case <-ctx.Done():
		case <-electCtx.Done():
			return
		}
		stopWork()
		if acquired.Load() {
			<-done
		}
		stopElect()
	}()

	le.Run(electCtx)
	started := acquired.Load()
	if started {
		// Not stopWork first: the elector has cancelled leading, and the
		// watcher in OnStartedLeading must be the one to stop the work, so
		// that a lost lease is told apart from work that ended on its own.
		<-done
	}
	err = workErr
	switch {
	case fence.fenced.Load() || closed(fenced):
		return ErrFenced
	case ctx.Err() != nil:
		return nil
	case lost.Load():
		return ErrLostLease
	case err != nil && !errors.Is(err, context.Canceled):
		return err
	}
	return nil
}

// closed reports whether c is closed, without waiting. The fence watcher
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

// recordingLock lets Run see the elector's "became leader" moment and hold
// a release until the work has stopped, tells who holds the Lease, and
// stamps the term with each renewal.
//
// Once the term was won and has gone RenewDeadline without a renewal, the
// lock refuses the elector's own requests too, without sending them: the
// process exits on a lost lease and never campaigns again, so after that
// moment there is nothing it may still ask the apiserver. client-go's
// elector then gives up at its renew deadline; its release, refused the same
// way, is not needed, since the successor has the Lease or will at expiry.
type recordingLock struct {
	resourcelock.Interface
	identity      string
	term          *term
	now           func() time.Time
	onEvent       func(string)
	beforeRelease func()
	onHolder      func(string)
}

// over reports a term that was won and is no longer live.
func (l *recordingLock) over() bool {
	return l.term != nil && l.term.won() && !l.term.live(l.now())
}

// Get is a standby's read of the Lease, which the elector makes anyway:
// the holder comes at no extra request. A leader renews without reading,
// so Create and Update tell its own writes.
func (l *recordingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if l.over() {
		return nil, nil, ErrTermOver
	}
	r, raw, err := l.Interface.Get(ctx)
	if err == nil && r != nil {
		l.holder(r.HolderIdentity)
	}
	return r, raw, err
}

func (l *recordingLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if l.over() {
		return ErrTermOver
	}
	sent := l.now()
	err := l.Interface.Create(ctx, r)
	if err == nil {
		l.wrote(r.HolderIdentity, sent)
	}
	return err
}

// wrote hears a successful write of the Lease: a renewal when it names us.
func (l *recordingLock) wrote(holder string, sent time.Time) {
	if holder != "" && holder == l.identity && l.term != nil {
		l.term.renewed(sent)
	}
	l.holder(holder)
}

func (l *recordingLock) holder(h string) {
	if l.onHolder != nil {
		l.onHolder(h)
	}
}

// Update is called by the elector to renew and, with an empty holder, to
// release.
func (l *recordingLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	if r.HolderIdentity == "" && l.beforeRelease != nil {
		l.beforeRelease()
	}
	if l.over() {
		return ErrTermOver
	}
	sent := l.now()
	err := l.Interface.Update(ctx, r)
	if err == nil {
		l.wrote(r.HolderIdentity, sent)
	}
	return err
}

func (l *recordingLock) RecordEvent(e string) {
	l.onEvent(e)
	l.Interface.RecordEvent(e)
}
