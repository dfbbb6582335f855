package lead

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// The renew deadline the term lives by is the contract's 10 s, written here
// as a number so a change of the constant shows.
const renewDeadlineSeconds = 10

// wonTerm is a term under ctx whose Lease was just written naming us.
func wonTerm(ctx context.Context) *term {
	t := newTerm(ctx)
	t.renewed(time.Now())
	return t
}

func TestTerm_StopThenWaitReturnsOnlyAfterTheWorkHasReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		events := &journal{}
		tm := wonTerm(t.Context())
		leading, stopLeading := context.WithCancel(t.Context())
		defer stopLeading()
		tm.start(leading, func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(linger) // a write still in flight
			events.add("work returned")
			return ctx.Err()
		})
		synctest.Wait()
		tm.stop()
		tm.wait()
		events.add("wait returned")
		if got, want := events.list(), []string{"work returned", "wait returned"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if tm.lost.Load() {
			t.Errorf("a stop asked for marked the term lost")
		}
	})
}

func TestTerm_StoppedBeforeItStartsNeverRunsTheWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := wonTerm(t.Context())
		tm.stop()
		tm.start(t.Context(), func(context.Context) error {
			t.Errorf("a term stopped while winning ran its work")
			return nil
		})
		tm.wait()
	})
}

func TestTerm_NeverWonWaitsForNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := newTerm(t.Context())
		start := time.Now()
		tm.stop()
		tm.wait()
		if took := time.Since(start); took != 0 {
			t.Errorf("wait on a term never won took %s, want at once", took)
		}
	})
}

func TestTerm_LeadershipEndingUnderTheWorkStopsItAndMarksTheTermLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := wonTerm(t.Context())
		defer tm.stop()
		leading, stopLeading := context.WithCancel(t.Context())
		tm.start(leading, func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
		synctest.Wait()
		stopLeading()
		tm.wait()
		if !tm.lost.Load() {
			t.Errorf("the term is not marked lost")
		}
		if !errors.Is(tm.err, context.Canceled) {
			t.Errorf("work's error = %v, want context.Canceled", tm.err)
		}
	})
}

func TestTerm_WorkEndingOnItsOwnIsNoLossWhenLeadershipEndsAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBroken := errors.New("work broke")
		tm := wonTerm(t.Context())
		defer tm.stop()
		leading, stopLeading := context.WithCancel(t.Context())
		tm.start(leading, func(context.Context) error { return errBroken })
		tm.wait()
		stopLeading() // the elector stops after the work, as Run orders it
		synctest.Wait()
		if tm.lost.Load() {
			t.Errorf("work that ended on its own marked the term lost")
		}
		if !errors.Is(tm.err, errBroken) {
			t.Errorf("work's error = %v, want %v", tm.err, errBroken)
		}
	})
}

func TestTerm_WorkRequestsAreRefusedOnceTheTermWentTenSecondsWithoutARenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := wonTerm(t.Context())
		defer tm.stop()
		next := &countingTransport{}
		transport := &deadlineTransport{next: next, now: func() time.Time { return time.Now().Add(renewDeadlineSeconds * time.Second) }}
		var err error
		tm.start(t.Context(), func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://apiserver/apis/x", nil)
			_, err = transport.RoundTrip(req)
			return nil
		})
		tm.wait()
		if !errors.Is(err, ErrTermOver) || next.calls != 0 {
			t.Errorf("a request of the work after the term: err %v, %d sent; want ErrTermOver, none sent", err, next.calls)
		}
	})
}
