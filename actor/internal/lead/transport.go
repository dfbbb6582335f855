package lead

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrPastDeadline is a request that was not sent because its deadline had
// already passed when it reached the wire.
var ErrPastDeadline = errors.New("request not sent: its deadline has passed")

// DeadlineTransport wraps the transport closest to the wire (rest.Config's
// WrapTransport) and refuses any request whose context deadline has passed,
// and any request of a leadership term's work once that term has gone
// RenewDeadline without a renewal (see term): a deposed leader's work,
// reads included, starts no request after its successor's takeover. A
// request already past this check when the process froze still goes out
// on the thaw; no process can close that gap, and the writes' preconditions
// are what make the apiserver refuse such a write (docs/contract.md#leadership).
//
// A context's deadline is enforced by a timer. A process frozen (SIGSTOP, a
// stalled VM) after the fence's check and thawed after a successor took the
// lease resumes with that timer still to fire, and the goroutine about to
// send can win the race against it. The monotonic clock kept running while
// the process was frozen, so comparing against it here closes the race.
func DeadlineTransport(next http.RoundTripper) http.RoundTripper {
	return &deadlineTransport{next: next, now: time.Now}
}

type deadlineTransport struct {
	next http.RoundTripper
	now  func() time.Time
}

func (d *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t, ok := termOf(req.Context()); ok && !t.live(d.now()) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s %s", ErrTermOver, req.Method, req.URL.Path)
	}
	if deadline, ok := req.Context().Deadline(); ok && !d.now().Before(deadline) {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip owns the body, even when refusing
		}
		return nil, fmt.Errorf("%w: %s %s, %s late", ErrPastDeadline, req.Method, req.URL.Path,
			d.now().Sub(deadline).Truncate(time.Millisecond))
	}
	return d.next.RoundTrip(req)
}
