package backoff_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/testkit"
)

func TestSleep_PassesOnlyOnceTheWholeWaitHas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		var passed *bool
		go func() {
			p := backoff.Sleep(context.Background(), clk, 10*time.Second)
			passed = &p
		}()
		testkit.AwaitTimer(t, clk, "Sleep")
		clk.Step(9 * time.Second)
		synctest.Wait()
		if passed != nil {
			t.Fatal("Sleep returned after 9 s of a 10 s wait")
		}
		clk.Step(time.Second)
		synctest.Wait()
		if passed == nil || !*passed {
			t.Fatalf("after the whole 10 s wait Sleep gave %v, want true", passed)
		}
	})
}

func TestSleep_EndsFalseWhenTheContextIsDoneAndLeavesNoWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		ctx, cancel := context.WithCancel(context.Background())
		var passed *bool
		go func() {
			p := backoff.Sleep(ctx, clk, time.Hour)
			passed = &p
		}()
		testkit.AwaitTimer(t, clk, "Sleep")
		cancel()
		synctest.Wait()
		if passed == nil || *passed {
			t.Fatalf("after cancel Sleep gave %v, want false", passed)
		}
		if clk.HasWaiters() {
			t.Fatal("a cancelled Sleep left its timer on the clock")
		}
	})
}
