package beat

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/testkit"
)

// patience turns a sender that never calls into a test failure. Tests run
// in a synctest bubble, so it passes only once every goroutine is stuck and
// costs no real time.
const patience = time.Minute

var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

type reply struct {
	verdict platform.Verdict
	err     error
}

// call is one PostHeartbeat in flight; the test answers it on reply.
type call struct {
	body  string
	at    time.Time
	reply chan<- reply
}

// fakePoster hands every call to the test and blocks until it is answered,
// so the test decides what each send returns and when.
type fakePoster struct {
	clk   *clocktesting.FakeClock
	calls chan call

	mu sync.Mutex
	n  int
}

var _ Poster = (*fakePoster)(nil)

func (p *fakePoster) PostHeartbeat(ctx context.Context, body []byte) (platform.Verdict, error) {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	answer := make(chan reply, 1)
	select {
	case p.calls <- call{body: string(body), at: p.clk.Now(), reply: answer}:
	case <-ctx.Done():
		return platform.Verdict{}, ctx.Err()
	}
	select {
	case r := <-answer:
		return r.verdict, r.err
	case <-ctx.Done():
		return platform.Verdict{}, ctx.Err()
	}
}

type harness struct {
	t      *testing.T
	clk    *clocktesting.FakeClock
	poster *fakePoster
	sender *Sender
	logs   *testkit.Logs
	run    *testkit.Running
}

// start runs a sender whose backoff has jitter fixed at 1, so waits are
// 1, 2, 4 … s up to 30 s. Call it inside synctest.Test: awaitTimer relies on the
// bubble to know the sender has gone quiet.
func start(t *testing.T, onVerdict func(context.Context, platform.Verdict)) *harness {
	t.Helper()
	return startObserved(t, onVerdict, nil)
}

// startObserved is start with onOutcome told of every attempt.
func startObserved(t *testing.T, onVerdict func(context.Context, platform.Verdict), onOutcome func(Outcome)) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	poster := &fakePoster{clk: clk, calls: make(chan call)}
	logs := &testkit.Logs{}
	bo := backoff.New(backoff.Options{Base: time.Second, Max: 30 * time.Second, Jitter: func() float64 { return 1 }})
	h := &harness{
		t: t, clk: clk, poster: poster, logs: logs,
		sender: NewSender(poster, clk, SenderOptions{Backoff: bo, Log: logs.Logger(), OnVerdict: onVerdict,
			OnOutcome: onOutcome}),
	}
	h.run = testkit.Start(t, patience, h.sender.Run)
	return h
}

// next returns the next call the sender makes.
func (h *harness) next() call {
	h.t.Helper()
	select {
	case c := <-h.poster.calls:
		return c
	case <-time.After(patience):
		h.t.Fatal("sender made no call")
		return call{}
	}
}

// awaitTimer returns once the sender is parked on its retry timer, so a Step
// that follows is sure to reach it.
func (h *harness) awaitTimer() {
	h.t.Helper()
	testkit.AwaitTimer(h.t, h.clk, "sender")
}

func (h *harness) calls() int {
	h.poster.mu.Lock()
	defer h.poster.mu.Unlock()
	return h.poster.n
}

// defaultCadence is the contract's rhythm: full 60 s, debounce 10 s,
// min-gap 15 s. Every deadline it yields falls on a whole second.
var defaultCadence = Cadence{Full: 60 * time.Second, Debounce: 10 * time.Second, MinGap: 15 * time.Second}

var errBuild = errors.New("encode snapshot: unsupported value")

// loopHarness runs a Loop on a fake clock and records, as offsets from t0,
// every Build call, every enqueued body and every Beat hook call.
type loopHarness struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	changed chan struct{}
	logs    *testkit.Logs
	stop    func()

	standDown atomic.Bool // what the heartbeat-owner marker says

	mu       sync.Mutex
	builds   []time.Duration
	queued   []time.Duration
	hooked   []time.Duration
	discards []time.Duration
	turns    int
}

// startLoop runs a Loop and lets its cold-start timer fire. A fake timer
// due now fires only when the clock is stepped, so the harness steps by
// zero: the first beat must then be at t0, with no time passed. failBuild,
// if not nil, says which Build calls (counted from 1) fail. Call it inside
// synctest.Test.
func startLoop(t *testing.T, failBuild func(call int) bool) *loopHarness {
	t.Helper()
	return startLoopAfter(t, failBuild, nil)
}

// startLoopAfter is startLoop with a loop whose first beat waits, up to the
// contract's 10 s, for the first reads syncs gives at offsets from t0 on the
// harness's clock; negative is never.
func startLoopAfter(t *testing.T, failBuild func(call int) bool, syncs []time.Duration) *loopHarness {
	t.Helper()
	h := &loopHarness{
		t:       t,
		clk:     clocktesting.NewFakeClock(t0),
		changed: make(chan struct{}, 1),
		logs:    &testkit.Logs{},
	}
	loop := &Loop{
		Cadence: defaultCadence,
		Clock:   h.clk,
		Changed: h.changed,
		Build: func(now time.Time) ([]byte, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.builds = append(h.builds, now.Sub(t0))
			if failBuild != nil && failBuild(len(h.builds)) {
				return nil, errBuild
			}
			return []byte(now.Sub(t0).String()), nil
		},
		Enqueue: func(body []byte) {
			at, err := time.ParseDuration(string(body))
			if err != nil {
				t.Errorf("enqueued %q, which Build never made", body)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			h.queued = append(h.queued, at)
		},
		Log: h.logs.Logger(),
		Beat: func(now time.Time) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.hooked = append(h.hooked, now.Sub(t0))
		},
		Beating: func() bool { return !h.standDown.Load() },
		Discard: func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.discards = append(h.discards, h.clk.Now().Sub(t0))
		},
		Turned: func(time.Time) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.turns++
		},
		FirstReadsLimit: 10 * time.Second,
	}
	for _, at := range syncs {
		loop.FirstReads = append(loop.FirstReads, &syncedAfter{clk: h.clk, at: at})
	}
	run := testkit.Start(t, patience, loop.Run)
	// Stopping also checks Run leaves no timer behind.
	h.stop = func() {
		t.Helper()
		run.Stop()
		if h.clk.HasWaiters() {
			t.Error("Run returned with its timer still armed")
		}
	}
	t.Cleanup(h.stop)
	testkit.AwaitTimer(t, h.clk, "loop")
	h.step(0)
	return h
}

// step moves the clock and returns once the loop has gone quiet again.
func (h *loopHarness) step(d time.Duration) {
	h.clk.Step(d)
	synctest.Wait()
}

// change signals the way the informers do, never blocking, and returns once
// the loop has handled it.
func (h *loopHarness) change() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
	synctest.Wait()
}

// runUntil steps one second at a time up to offset end, signalling a change
// right after reaching each offset in changes. Whole-second steps land on
// every deadline exactly, so a beat is recorded at its due time rather than
// at the end of a long step.
func (h *loopHarness) runUntil(end time.Duration, changes []time.Duration) {
	for at := h.clk.Now().Sub(t0) + time.Second; at <= end; at += time.Second {
		h.step(time.Second)
		if slices.Contains(changes, at) {
			h.change()
		}
	}
}

type record struct{ builds, queued, hooked []time.Duration }

func (h *loopHarness) record() record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return record{slices.Clone(h.builds), slices.Clone(h.queued), slices.Clone(h.hooked)}
}

// realClockLoop is a Loop on the real clock, inside a synctest bubble, and
// the times since its start at which it queued beats.
func realClockLoop(changed chan struct{}) (*Loop, func() []time.Duration) {
	start := time.Now()
	var mu sync.Mutex
	var beats []time.Duration
	loop := &Loop{
		Cadence: defaultCadence,
		Clock:   clock.RealClock{},
		Changed: changed,
		Build:   func(time.Time) ([]byte, error) { return []byte("{}"), nil },
		Enqueue: func([]byte) {
			mu.Lock()
			defer mu.Unlock()
			beats = append(beats, time.Since(start))
		},
		Log: slog.New(slog.DiscardHandler),
	}
	return loop, func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(beats)
	}
}

// syncedAfter is a first read that ends at offset at from t0 on clk; never
// when at is negative.
type syncedAfter struct {
	clk *clocktesting.FakeClock
	at  time.Duration
}

func (s *syncedAfter) HasSynced() bool { return s.at >= 0 && s.clk.Now().Sub(t0) >= s.at }

type neverSynced struct{}

func (neverSynced) HasSynced() bool { return false }

// seconds is offsets from t0 in whole seconds.
func seconds(s ...int) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, n := range s {
		out[i] = time.Duration(n) * time.Second
	}
	return out
}
