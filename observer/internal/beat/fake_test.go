package beat

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

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
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

// start runs a sender whose backoff has jitter fixed at 1, so waits are
// 1, 2, 4 … s up to 30 s. Call it inside synctest.Test: awaitTimer relies on the
// bubble to know the sender has gone quiet.
func start(t *testing.T, onVerdict func(platform.Verdict)) *harness {
	t.Helper()
	return startObserved(t, onVerdict, nil)
}

// startObserved is start with onOutcome told of every attempt.
func startObserved(t *testing.T, onVerdict func(platform.Verdict), onOutcome func(Outcome)) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	poster := &fakePoster{clk: clk, calls: make(chan call)}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	bo := backoff.New(time.Second, 30*time.Second, func() float64 { return 1 })
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{
		t: t, clk: clk, poster: poster, logs: logs, cancel: cancel, done: make(chan error, 1),
		sender: NewSender(poster, clk, bo, log, onVerdict),
	}
	if onOutcome != nil {
		h.sender.OnOutcome(onOutcome)
	}
	go func() { h.done <- h.sender.Run(ctx) }()
	t.Cleanup(h.stop)
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
	synctest.Wait()
	if !h.clk.HasWaiters() {
		h.t.Fatal("sender is not waiting on a retry timer")
	}
}

// stop cancels Run and checks it returns nil without the clock moving; safe
// to call twice.
func (h *harness) stop() {
	h.t.Helper()
	h.cancel()
	select {
	case err, ok := <-h.done:
		if ok && err != nil {
			h.t.Errorf("Run() = %v, want nil", err)
		}
		if ok {
			close(h.done)
		}
	case <-time.After(patience):
		h.t.Fatal("Run did not return after cancel")
	}
}

func (h *harness) calls() int {
	h.poster.mu.Lock()
	defer h.poster.mu.Unlock()
	return h.poster.n
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
