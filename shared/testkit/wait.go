package testkit

import (
	"testing"
	"testing/synctest"
	"time"
)

// Timers is the part of a fake clock that knows whether anyone waits on it.
type Timers interface {
	HasWaiters() bool
}

// AwaitTimer returns once every goroutine of the synctest bubble is blocked,
// and fails t unless one of them waits on clk: then a Step that follows is
// sure to reach it. who names the waiter in the failure.
func AwaitTimer(t testing.TB, clk Timers, who string) {
	t.Helper()
	synctest.Wait()
	if !clk.HasWaiters() {
		t.Fatalf("%s is not waiting on a timer", who)
	}
}

// Await polls cond in real time until it holds, failing t after patience:
// for informers and other goroutines outside any synctest bubble. patience
// is a deadline for a hung test, never a delay a passing test sits through.
func Await(t testing.TB, patience time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
