package beat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/wire"
)

func status(code int) error { return &platform.StatusError{Code: code} }

func TestSender_RetriesUntilSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil)
		h.sender.Enqueue([]byte("b1"))

		h.next().reply <- reply{err: status(500)}
		h.awaitTimer()
		h.clk.Step(time.Second)
		h.next().reply <- reply{err: status(500)}
		h.awaitTimer()
		h.clk.Step(2 * time.Second)
		c := h.next()
		c.reply <- reply{}
		synctest.Wait()
		h.run.Stop()

		if c.body != "b1" || h.calls() != 3 {
			t.Errorf("third call sent %q after %d calls, want b1 after exactly 3", c.body, h.calls())
		}
	})
}

func TestSender_SuccessResetsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil)
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{err: status(500)}
		h.awaitTimer()
		h.clk.Step(time.Second)
		h.next().reply <- reply{}

		h.sender.Enqueue([]byte("b2"))
		failedAt := h.clk.Now()
		h.next().reply <- reply{err: status(500)}
		h.awaitTimer()
		h.clk.Step(time.Second)
		if c := h.next(); c.at.Sub(failedAt) != time.Second {
			t.Errorf("retry after a success waited %s, want the 1 s base", c.at.Sub(failedAt))
		}
	})
}

func TestSender_KeepsOnlyLatestPayload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil)
		h.sender.Enqueue([]byte("t1"))
		inFlight := h.next()
		h.sender.Enqueue([]byte("t2"))
		h.sender.Enqueue([]byte("t3"))
		inFlight.reply <- reply{}

		c := h.next()
		c.reply <- reply{}
		synctest.Wait()
		h.run.Stop()

		if inFlight.body != "t1" || c.body != "t3" || h.calls() != 2 {
			t.Errorf("sent %q then %q in %d calls, want t1 then t3 in 2", inFlight.body, c.body, h.calls())
		}
	})
}

// The platform is rejecting us or asked for room, so a newer payload waits
// the whole backoff and then goes out instead of the rejected one.
func TestSender_RejectionWaitsInFullThenSendsNewest(t *testing.T) {
	tests := []struct {
		name string
		err  error
		wait time.Duration
	}{
		{"401 auth", status(401), time.Second},
		{"403 auth", status(403), time.Second},
		{"429 with Retry-After 3 s", &platform.StatusError{Code: 429, RetryAfter: 3 * time.Second}, 3 * time.Second},
		{"503 with Retry-After 3 s", &platform.StatusError{Code: 503, RetryAfter: 3 * time.Second}, 3 * time.Second},
		{"429 without Retry-After", status(429), time.Second},
		{"503 without Retry-After", status(503), time.Second},
		{"400", status(400), time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, nil)
				h.sender.Enqueue([]byte("b1"))
				h.next().reply <- reply{err: tt.err}
				h.awaitTimer()
				h.sender.Enqueue([]byte("b2"))
				h.sender.Enqueue([]byte("b3"))

				h.clk.Step(tt.wait - time.Nanosecond)
				h.awaitTimer()
				if h.calls() != 1 {
					t.Fatalf("a newer payload cut the wait short: %d calls 1 ns before the retry", h.calls())
				}
				h.clk.Step(time.Nanosecond)
				c := h.next()
				c.reply <- reply{}
				synctest.Wait()
				h.run.Stop()

				if got := c.at.Sub(t0); got != tt.wait || c.body != "b3" || h.calls() != 2 {
					t.Errorf("retry sent %q after %s as call %d, want b3 after %s as call 2", c.body, got, h.calls(), tt.wait)
				}
			})
		})
	}
}

// Nothing says the platform wants us to slow down, so fresh state goes out
// at once rather than after the backoff.
func TestSender_ServerFaultEndsWaitOnNewerPayload(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"transport error", errors.New("dial tcp: connection refused")},
		{"500", status(500)},
		{"502", status(502)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, nil)
				h.sender.Enqueue([]byte("b1"))
				h.next().reply <- reply{err: tt.err}
				h.awaitTimer()
				h.sender.Enqueue([]byte("b2"))

				c := h.next()
				c.reply <- reply{}
				h.run.Stop()

				if c.body != "b2" || !c.at.Equal(t0) {
					t.Errorf("retry sent %q at +%s, want b2 at once", c.body, c.at.Sub(t0))
				}
			})
		})
	}
}

func TestSender_LogsFailureWithoutBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil)
		h.sender.Enqueue([]byte("secret-node-name"))
		h.next().reply <- reply{err: status(401)}
		h.awaitTimer()
		h.run.Stop()

		line := strings.TrimSpace(h.logs.String())
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("want one JSON log line, got %q: %v", line, err)
		}
		want := map[string]any{"level": "ERROR", "status": 401.0, "wait": "1s", "attempt": 1.0}
		for k, v := range want {
			if rec[k] != v {
				t.Errorf("log %s = %v, want %v", k, rec[k], v)
			}
		}
		if rec["err"] == nil {
			t.Error("log has no err")
		}
		if strings.Contains(line, "secret-node-name") {
			t.Errorf("log leaks the body: %s", line)
		}
	})
}

func TestSender_RunReturnsPromptlyOnCancel(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
	}{
		{"idle", func(*harness) {}},
		{"send in flight", func(h *harness) {
			h.sender.Enqueue([]byte("b1"))
			h.next()
		}},
		{"waiting out an auth backoff", func(h *harness) {
			h.sender.Enqueue([]byte("b1"))
			h.next().reply <- reply{err: status(401)}
			h.awaitTimer()
		}},
		{"waiting out an interruptible backoff", func(h *harness) {
			h.sender.Enqueue([]byte("b1"))
			h.next().reply <- reply{err: status(500)}
			h.awaitTimer()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, func(context.Context, platform.Verdict) {})
				tt.setup(h)
				h.run.Stop()
			})
		})
	}
}

// TestSender_DiscardDropsAPendingRetry: when the observer stands down, a
// payload waiting for its retry must never go out.
func TestSender_DiscardDropsAPendingRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil)
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{err: status(500)}
		h.awaitTimer()
		h.sender.Discard()
		h.clk.Step(time.Minute)
		synctest.Wait()
		if n := h.calls(); n != 1 {
			t.Fatalf("%d sends after Discard, want the one before it", n)
		}
		h.sender.Enqueue([]byte("b2"))
		c := h.next()
		c.reply <- reply{}
		synctest.Wait()
		h.run.Stop()
		if c.body != "b2" {
			t.Fatalf("sent %q, want the payload enqueued after Discard", c.body)
		}
	})
}

func TestSender_TellsHowEveryAttemptEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []Outcome // the send goroutine appends; read after stop
		h := startObserved(t, nil, func(o Outcome) { got = append(got, o) })
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{err: status(503)}
		h.awaitTimer()
		h.clk.Step(time.Second)
		h.next().reply <- reply{}
		synctest.Wait()
		h.run.Stop()

		want := []Outcome{{At: t0, Err: status(503)}, {At: t0.Add(time.Second)}}
		if len(got) != len(want) {
			t.Fatalf("told of %d attempts, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			if !got[i].At.Equal(want[i].At) || (got[i].Err == nil) != (want[i].Err == nil) {
				t.Errorf("attempt %d: %+v, want %+v", i+1, got[i], want[i])
			}
		}
	})
}

func verdict(name string) platform.Verdict {
	return platform.Verdict{Present: true, Updates: []wire.AvailableUpdate{{Name: name}}}
}

func TestSender_SlowVerdictConsumerDoesNotDelaySends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var delivered []string
		gate := make(chan struct{})
		h := start(t, func(_ context.Context, v platform.Verdict) {
			delivered = append(delivered, v.Updates[0].Name)
			<-gate
		})

		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{verdict: verdict("v1")}
		synctest.Wait()
		// The consumer now sits on v1; beats still flow, and only the newest
		// verdict waits for it.
		for _, r := range []reply{{verdict: verdict("v2")}, {verdict: verdict("v3")}, {}} {
			h.sender.Enqueue([]byte("b"))
			h.next().reply <- r
		}
		synctest.Wait()
		close(gate)
		synctest.Wait()
		h.run.Stop()

		if got := strings.Join(delivered, ","); got != "v1,v3" {
			t.Errorf("delivered %s, want v1,v3", got)
		}
	})
}

func TestSender_RunWaitsForVerdictInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		h := start(t, func(context.Context, platform.Verdict) { <-gate })
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{verdict: verdict("v1")}
		synctest.Wait()

		h.run.Cancel()
		synctest.Wait()
		if h.run.Returned() {
			t.Fatal("Run returned while onVerdict was still running")
		}
		close(gate)
		h.run.Stop()
	})
}

// A write-back stuck on a slow apiserver must not hold the observer's exit
// for its whole deadline: its context ends with Run's.
func TestSender_AVerdictInProgressIsToldOfTheShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(ctx context.Context, _ platform.Verdict) { <-ctx.Done() })
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{verdict: verdict("v1")}
		synctest.Wait()

		h.run.Cancel()
		synctest.Wait()
		if !h.run.Returned() {
			t.Fatal("Run still waits for a verdict delivery whose context should have ended")
		}
		h.run.Stop()
	})
}
