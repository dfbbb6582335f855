package desired

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/testkit"
)

// patience turns a poller that never calls into a test failure. Tests run in
// a synctest bubble, so it passes only once every goroutine is stuck and
// costs no real time.
const patience = time.Hour

// interval is the poll interval every harness uses; its jitter is 0, so the
// steady wait is exactly this.
const interval = 60 * time.Second

var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

type reply struct {
	resp platform.DesiredResponse
	err  error
}

func ok(etag, body string) reply {
	return reply{resp: platform.DesiredResponse{ETag: etag, Body: []byte(body), ContentType: "application/json"}}
}

func notModified() reply { return reply{resp: platform.DesiredResponse{NotModified: true}} }

func failure(err error) reply { return reply{err: err} }

func status(code int) error { return &platform.StatusError{Code: code} }

// doc is a valid document at revision rev with only scaling authorized.
func doc(rev int) string {
	return fmt.Sprintf(`{"revision":%d,"kubernetesVersion":null,`+
		`"workerPools":[{"name":"pool-a","machineType":"cpx31","desiredReplicas":3}],`+
		`"execution":{"scaling":true,"upgrades":false,"healing":false}}`, rev)
}

// call is one GetDesired in flight; the test answers it on reply.
type call struct {
	etag  string
	at    time.Time
	reply chan<- reply
}

// fakeFetcher hands every call to the test and blocks until it is answered.
type fakeFetcher struct {
	clk   *clocktesting.FakeClock
	calls chan call

	mu sync.Mutex
	n  int
}

var _ Fetcher = (*fakeFetcher)(nil)

func (f *fakeFetcher) GetDesired(ctx context.Context, etag string) (platform.DesiredResponse, error) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	answer := make(chan reply, 1)
	select {
	case f.calls <- call{etag: etag, at: f.clk.Now(), reply: answer}:
	case <-ctx.Done():
		return platform.DesiredResponse{}, ctx.Err()
	}
	select {
	case r := <-answer:
		return r.resp, r.err
	case <-ctx.Done():
		return platform.DesiredResponse{}, ctx.Err()
	}
}

// fakeExecutor records what it was asked and answers Execute from retries,
// in order, then false.
type fakeExecutor struct {
	mu       sync.Mutex
	retries  []bool
	executed []Document
	cleared  []string
	// log is every call in order: "execute", "clear" or "flush".
	log []string
}

var _ Executor = (*fakeExecutor)(nil)

func (e *fakeExecutor) Execute(_ context.Context, doc Document) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.executed = append(e.executed, doc)
	e.log = append(e.log, "execute")
	if len(e.retries) == 0 {
		return false
	}
	retry := e.retries[0]
	e.retries = e.retries[1:]
	return retry
}

func (e *fakeExecutor) Clear(reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleared = append(e.cleared, reason)
	e.log = append(e.log, "clear")
}

func (e *fakeExecutor) Flush(context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, "flush")
}

func (e *fakeExecutor) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string{}, e.log...)
}

// revisions lists the revision of every document executed, in order.
func (e *fakeExecutor) revisions() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []int64{}
	for _, d := range e.executed {
		out = append(out, d.Revision)
	}
	return out
}

func (e *fakeExecutor) clears() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string{}, e.cleared...)
}

type harness struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	fetcher *fakeFetcher
	exec    *fakeExecutor
	bo      *backoff.Backoff
	logs    *testkit.Logs
	run     *testkit.Running

	mu      sync.Mutex
	results []PollResult
}

// outcomes lists every PollResult's Outcome, in order.
func (h *harness) outcomes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []string{}
	for _, r := range h.results {
		out = append(out, r.Outcome)
	}
	return out
}

// start runs a poller at interval with no steady jitter and a backoff whose
// jitter is fixed at 1, so failure waits are 1, 2, 4 … s up to 30 s. retries
// are the executor's answers. Call it inside synctest.Test.
func start(t *testing.T, retries ...bool) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	h := &harness{
		t: t, clk: clk, logs: &testkit.Logs{},
		fetcher: &fakeFetcher{clk: clk, calls: make(chan call)},
		exec:    &fakeExecutor{retries: retries},
		bo:      backoff.New(backoff.Options{Base: time.Second, Max: 30 * time.Second, Jitter: func() float64 { return 1 }}),
	}
	p := NewPoller(h.fetcher, h.exec, clk, PollOptions{Interval: interval, Backoff: h.bo, Jitter: func() float64 { return 0 },
		Log: h.logs.Logger(), Results: func(r PollResult) {
			h.mu.Lock()
			h.results = append(h.results, r)
			h.mu.Unlock()
		}})
	h.run = testkit.Start(t, patience, p.Run)
	return h
}

// next returns the next call the poller makes.
func (h *harness) next() call {
	h.t.Helper()
	select {
	case c := <-h.fetcher.calls:
		return c
	case <-time.After(patience):
		h.t.Fatal("poller made no call")
		return call{}
	}
}

// serve answers the next call with r and returns it once the poller is
// parked on its timer again.
func (h *harness) serve(r reply) call {
	h.t.Helper()
	c := h.next()
	c.reply <- r
	h.awaitTimer()
	return c
}

// serveSteady answers the next calls with rs in turn, checking each time
// that the poller then waits exactly interval.
func (h *harness) serveSteady(rs ...reply) {
	h.t.Helper()
	for _, r := range rs {
		h.serve(r)
		h.waits(interval)
	}
}

// waits checks that the poller's next call comes exactly d from now and not
// a nanosecond sooner, leaving the clock at that moment.
func (h *harness) waits(d time.Duration) {
	h.t.Helper()
	h.awaitTimer()
	before := h.calls()
	h.clk.Step(d - time.Nanosecond)
	synctest.Wait()
	if h.calls() != before {
		h.t.Fatalf("poller called before its %s wait was over", d)
	}
	h.clk.Step(time.Nanosecond)
}

// awaitTimer returns once the poller is parked on its timer.
func (h *harness) awaitTimer() {
	h.t.Helper()
	testkit.AwaitTimer(h.t, h.clk, "poller")
}

func (h *harness) calls() int {
	h.fetcher.mu.Lock()
	defer h.fetcher.mu.Unlock()
	return h.fetcher.n
}
