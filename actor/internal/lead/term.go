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

// term is one leadership term, as this process's own clock sees it. A
// successor can take the Lease only LeaseDuration after it last saw our
// renewal land, and we stamp each renewal when we send it, which is before
// it lands; so until RenewDeadline after that stamp the term is surely
// ours, with LeaseDuration - RenewDeadline to spare. Both ends measure
// elapsed time on their monotonic clocks, which keep running while a process
// is frozen: a leader thawed after a SIGSTOP or a stalled VM finds its term
// over before it sends a single request, instead of learning so from the
// apiserver.
type term struct {
	renewSent atomic.Pointer[time.Time] // nil until the Lease was first won
}

// renewed records a successful Create or Update of the Lease naming us,
// stamped with when it was sent.
func (t *term) renewed(sent time.Time) { t.renewSent.Store(&sent) }

// live reports whether the term may still send at now. A term never won is
// not live, but the caller decides whether that matters (a standby's reads
// of the Lease are how it campaigns).
func (t *term) live(now time.Time) bool {
	sent := t.renewSent.Load()
	return sent != nil && now.Before(sent.Add(RenewDeadline))
}

// won reports whether the Lease was ever held in this term.
func (t *term) won() bool { return t.renewSent.Load() != nil }

type termKey struct{}

// withTerm marks ctx as belonging to t: DeadlineTransport refuses every request made
// under it once t is not live.
func withTerm(ctx context.Context, t *term) context.Context {
	return context.WithValue(ctx, termKey{}, t)
}

func termOf(ctx context.Context) (*term, bool) {
	t, ok := ctx.Value(termKey{}).(*term)
	return t, ok
}
