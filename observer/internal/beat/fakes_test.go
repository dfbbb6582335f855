package beat

import (
	"context"
	"sync"
	"testing"
	"time"

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
