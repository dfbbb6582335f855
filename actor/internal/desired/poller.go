package desired

// The Poller is the only place that decides whether the agent may act at all. A
// fresh, valid document is always acted on; a 304 acts again only when the last
// pass asked for a retry, on the document cached from the last 200. When the
// platform answers but authorizes nothing (a 4xx, or a document that does not
// decode and validate), every report is cleared and the cache is dropped, so
// nothing stale can be acted on later (closing docs/contract.md#g-1). When the
// platform cannot answer (5xx, 429, transport), what it authorized last still
// stands: the reports stay, and nothing acts until it answers again.

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
)

// DefaultPollInterval replaces a non-positive poll interval
// (docs/contract.md#desired-poll-cadence).
const DefaultPollInterval = 60 * time.Second

// Fetcher fetches the desired-state document, conditionally when etag is not "".
type Fetcher interface {
	GetDesired(ctx context.Context, etag string) (platform.DesiredResponse, error)
}

// Executor acts on a document. Both methods are called from Run's goroutine
// only, one at a time.
type Executor interface {
	// Execute runs the gate and the capabilities on doc and reports whether
	// the next 304 should run it again.
	Execute(ctx context.Context, doc Document) (retry bool)
	// Clear drops every report: the platform no longer authorizes anything.
	// It may be called again while that stays true, so it must be idempotent.
	Clear(reason string)
	// Flush writes the reports again where the ConfigMap does not hold them
	// (a publish that failed, or someone else's write); it is called on
	// every tick that neither executes nor clears.
	Flush(ctx context.Context)
}

// Progress is told, before each step and before each wait, that the loop is
// still turning; a liveness probe fails when it hears nothing for too long.
type Progress interface {
	// Step: a bounded step (one request, one pass) starts now.
	Step()
	// Waiting: the loop sleeps for d before its next step.
	Waiting(d time.Duration)
}

// Poller polls the desired-state endpoint on its own cadence. Everything in
// it belongs to the Run goroutine.
type Poller struct {
	fetcher  Fetcher
	exec     Executor
	clk      clock.Clock
	interval time.Duration
	bo       *backoff.Backoff
	jitter   func() float64
	log      *slog.Logger
	progress Progress         // nil: nobody listens
	results  func(PollResult) // nil: nobody listens

	// etag is the ETag of the cached document, "" when none is cached or the
	// 200 carried none. It is never set without doc.
	etag string
	// doc is the last valid document, nil once the platform withdrew it.
	doc *Document
	// retry is the last Execute's answer.
	retry bool
}

// PollOptions tune a Poller; every field may be left zero.
type PollOptions struct {
	Interval time.Duration    // between answers; zero or less: DefaultPollInterval
	Backoff  *backoff.Backoff // after failures; nil: the docs/contract.md#backoff defaults (1 s base, 5 min max)
	Jitter   func() float64   // a factor in [0, 1) for the steady wait; nil: math/rand/v2's Float64
	Log      *slog.Logger     // nil: discard
	Progress Progress         // told that the loop still turns; nil: nobody listens
	Results  func(PollResult) // told how every request ended, on Run's goroutine; nil: nobody listens
}

// NewPoller wires a poller that fetches from f and hands documents to e.
func NewPoller(f Fetcher, e Executor, clk clock.Clock, opts PollOptions) *Poller {
	p := &Poller{fetcher: f, exec: e, clk: clk, interval: opts.Interval, bo: opts.Backoff, jitter: opts.Jitter,
		log: opts.Log, progress: opts.Progress, results: opts.Results}
	if p.interval <= 0 {
		p.interval = DefaultPollInterval
	}
	if p.bo == nil {
		p.bo = backoff.New(backoff.Options{})
	}
	if p.jitter == nil {
		p.jitter = rand.Float64
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// PollResult is how one request for the desired state ended.
type PollResult struct {
	At time.Time
	// Outcome is "new document", "unchanged", "invalid document",
	// "HTTP <code>" or "error".
	Outcome string
	Err     error
}

func (p *Poller) result(outcome string, err error) {
	if p.results == nil {
		return
	}
	if code, ok := statusCode(err); ok {
		outcome = fmt.Sprintf("HTTP %d", code)
	}
	p.results(PollResult{At: p.clk.Now(), Outcome: outcome, Err: err})
}

// Run polls at once, then after every answer waits the interval (plus up to
// 10 %) or, after a failure, the backoff. It returns nil once ctx is done.
// Call it once.
func (p *Poller) Run(ctx context.Context) error {
	for {
		if p.progress != nil {
			p.progress.Step()
		}
		wait := p.poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if p.progress != nil {
			p.progress.Waiting(wait)
		}
		if !backoff.Sleep(ctx, p.clk, wait) {
			return nil
		}
	}
}

// poll makes one request, acts on its answer and returns the wait before the
// next one. A tick that runs no pass still flushes reports that did not land.
func (p *Poller) poll(ctx context.Context) time.Duration {
	wait, acted := p.tick(ctx)
	if !acted && ctx.Err() == nil {
		p.exec.Flush(ctx)
	}
	return wait
}

// tick fetches and handles one answer; acted says whether Execute or Clear ran.
func (p *Poller) tick(ctx context.Context) (wait time.Duration, acted bool) {
	resp, err := p.fetcher.GetDesired(ctx, p.etag)
	if ctx.Err() != nil {
		return 0, false
	}
	if err != nil {
		p.result("error", err)
		return p.failed(err)
	}
	if resp.NotModified {
		p.result("unchanged", nil)
		acted = p.unchanged(ctx)
	} else {
		doc, err := decode(resp)
		if err != nil {
			p.result("invalid document", err)
			return p.invalid(err), true
		}
		p.result("new document", nil)
		p.changed(ctx, doc, resp.ETag)
		acted = true
	}
	p.bo.Reset()
	return steadyWait(p.interval, p.jitter()), acted
}

// changed caches a fresh document with its ETag and always acts on it.
func (p *Poller) changed(ctx context.Context, doc Document, etag string) {
	logPull(p.log, doc)
	p.doc, p.etag = &doc, etag
	p.retry = p.exec.Execute(ctx, doc)
}

// unchanged acts again on the cached document only when the last pass asked
// for it, and says whether it did.
func (p *Poller) unchanged(ctx context.Context) bool {
	// Without a cached document and its ETag no If-None-Match went out, so
	// a 304 then is the platform misbehaving and refers to nothing we may
	// act on.
	if p.doc == nil || p.etag == "" || !p.retry {
		p.log.Debug("Desired state unchanged")
		return false
	}
	p.log.Debug("Desired state unchanged, acting again on the cached document", "revision", p.doc.Revision)
	p.retry = p.exec.Execute(ctx, *p.doc)
	return true
}

// decode reads a 2xx answer: only a JSON answer is a document at all (an
// HTML page from a proxy in front of the platform authorizes nothing).
func decode(resp platform.DesiredResponse) (Document, error) {
	if !platform.IsJSON(resp.ContentType) {
		return Document{}, fmt.Errorf("desired state: answer is %q, not application/json", resp.ContentType)
	}
	return Decode(resp.Body)
}

// failed handles a fetch that got no document and returns the backoff wait
// and whether the reports were cleared.
func (p *Poller) failed(err error) (time.Duration, bool) {
	wait := failureWait(p.bo.Next(), err)
	attrs := []any{"attempt", p.bo.Attempt(), "wait", wait.String(), "err", err}
	if code, ok := statusCode(err); ok {
		attrs = append(attrs, "status", code)
	}
	switch {
	case !withdrawn(err):
		p.log.Warn("Desired state fetch failed, keeping reports and retrying", attrs...)
		return wait, false
	case platform.IsAuth(err):
		attrs = append(attrs, "check", "the agent token in the identity Secret (kubectl -n kubehz-system get secret kubehz-agent, or KUBEHZ_NAMESPACE/KUBEHZ_SECRET_NAME if changed) and that CLUSTER_ID is the cluster the platform registered")
		p.log.Error("Desired state rejected: agent token not accepted; acting stopped, reports cleared, retrying after full backoff", attrs...)
	default:
		p.log.Error("Desired state refused by the platform; acting stopped, reports cleared", attrs...)
	}
	p.withdraw(fmt.Sprintf("desired state: %v", err))
	return wait, true
}

// invalid handles a 2xx whose document does not decode or validate: it is
// the platform's answer, and it authorizes nothing.
func (p *Poller) invalid(err error) time.Duration {
	wait := failureWait(p.bo.Next(), nil)
	p.log.Error("Desired state document rejected; acting stopped, reports cleared",
		"attempt", p.bo.Attempt(), "wait", wait.String(), "err", err)
	p.withdraw(fmt.Sprintf("invalid document: %v", err))
	return wait
}

// withdraw forgets the cached document and its ETag before clearing the
// reports. Dropping the ETag too makes the next request unconditional, so the
// platform must send a whole document before anything acts again, even if it
// is the same one as before.
func (p *Poller) withdraw(reason string) {
	p.doc, p.etag, p.retry = nil, "", false
	p.exec.Clear(reason)
}

// logPull records every 200 (docs/contract.md#desired-validation). The empty
// key inlines the document's own LogValue group, so the fields sit at the top
// of the line.
func logPull(log *slog.Logger, doc Document) {
	log.Info("Desired state pulled", slog.Any("", doc))
}
