package testkit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Running is a component's Run called in its own goroutine for the length
// of a test.
type Running struct {
	t        testing.TB
	patience time.Duration
	cancel   context.CancelFunc
	returned chan struct{} // closed once run has returned err
	err      error
	once     sync.Once
}

// Start calls run in its own goroutine until Stop, which t's cleanup also
// calls. patience bounds how long Stop waits for run to return.
func Start(t testing.TB, patience time.Duration, run func(context.Context) error) *Running {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &Running{t: t, patience: patience, cancel: cancel, returned: make(chan struct{})}
	go func() {
		r.err = run(ctx)
		close(r.returned)
	}()
	t.Cleanup(r.Stop)
	return r
}

// Stop cancels run and fails the test unless it returns nil within
// patience: a component whose Run hangs after cancel, or reports an error
// for it, is a bug of its own. Calls after the first do nothing.
func (r *Running) Stop() {
	r.t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case <-r.returned:
			if r.err != nil {
				r.t.Errorf("Run = %v, want nil on cancel", r.err)
			}
		case <-time.After(r.patience):
			r.t.Error("Run did not return after cancel")
		}
	})
}

// Cancel cancels run without waiting for it, for a test of what Run does
// between the cancel and its return.
func (r *Running) Cancel() { r.cancel() }

// Returned says whether run has returned, without waiting.
func (r *Running) Returned() bool {
	select {
	case <-r.returned:
		return true
	default:
		return false
	}
}
