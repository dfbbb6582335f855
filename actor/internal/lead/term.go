package lead

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrTermOver is a request refused before it was sent: the term it belongs
// to has gone RenewDeadline without a renewal, so this process may no longer
// be the leader and sends nothing more in that term's name.
var ErrTermOver = errors.New("request not sent: the leadership term has not renewed within the renew deadline")

// term is one leadership term: won by the first write of the Lease naming
// us, live while our renewals keep being sent, and the leader-only work that
// runs in it. The work is started once, stopped, and waited for; the lease
// is released only after the wait (see Run).
//
// Liveness is judged on this process's own clock. A successor can take the
// Lease only LeaseDuration after it last saw our renewal land, and we stamp
// each renewal when we send it, which is before it lands; so until
// RenewDeadline after that stamp the term is surely ours, with
// LeaseDuration - RenewDeadline to spare. Both ends measure elapsed time on
// their monotonic clocks, which keep running while a process is frozen: a
// leader thawed after a SIGSTOP or a stalled VM finds its term over before
// it starts a single request, instead of learning so from the apiserver
// (a request already past DeadlineTransport's check still goes out).
//
// The zero term is one never won; newTerm adds what running work needs.
type term struct {
	renewSent atomic.Pointer[time.Time] // nil until the Lease was first won

	ctx    context.Context // the work's: marked with the term, ended by stop
	cancel context.CancelFunc
	done   chan struct{} // closed once the work has returned, or start declined to run it
	err    error         // the work's, written before done closes
	lost   atomic.Bool   // leadership ended under the work, rather than a stop being asked for
}

// newTerm makes a term whose work runs under parent.
func newTerm(parent context.Context) *term {
	t := &term{done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(withTerm(parent, t))
	return t
}

// renewed records a successful Update of the Lease naming us (the actor
// never creates it), stamped with when it was sent.
func (t *term) renewed(sent time.Time) { t.renewSent.Store(&sent) }

// live reports whether the term may still send at now. A term never won is
// not live, but the caller decides whether that matters (a standby's reads
// of the Lease are how it campaigns).
func (t *term) live(now time.Time) bool {
	sent := t.renewSent.Load()
	return sent != nil && now.Before(sent.Add(RenewDeadline))
}

// won reports whether the Lease was ever held in this term. It turns true
// inside the elector's winning write, before the elector starts its leading
// callback, so once it is true start is sure to be called.
func (t *term) won() bool { return t.renewSent.Load() != nil }

// start runs work on a goroutine of its own and returns at once; it is
// called once, when the term is won. A term stopped before it started (killed
// or cancelled while winning) never runs the work. leading ending while the
// work runs is leadership lost under it: the work is stopped and the term
// marked lost.
func (t *term) start(leading context.Context, work func(context.Context) error) {
	if t.ctx.Err() != nil {
		close(t.done)
		return
	}
	go func() {
		defer close(t.done)
		t.err = work(t.ctx)
	}()
	go func() {
		select {
		case <-leading.Done():
			select {
			case <-t.done: // the work had already ended on its own
			default:
				t.lose()
			}
		case <-t.ctx.Done():
		}
	}()
}

// stop ends the work's context; the work may still be returning.
func (t *term) stop() { t.cancel() }

// lose records that leadership ended while the term still counted on it,
// and stops the work.
func (t *term) lose() {
	t.lost.Store(true)
	t.cancel()
}

// wait returns once the work has returned. A term never won returns at
// once: its work never starts.
func (t *term) wait() {
	if t.won() {
		<-t.done
	}
}

type termKey struct{}

// withTerm marks ctx as belonging to t: DeadlineTransport refuses every
// request made under it once t is not live.
func withTerm(ctx context.Context, t *term) context.Context {
	return context.WithValue(ctx, termKey{}, t)
}

func termOf(ctx context.Context) (*term, bool) {
	t, ok := ctx.Value(termKey{}).(*term)
	return t, ok
}
