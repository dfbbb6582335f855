package beat

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
)

// Poster delivers one heartbeat body to the platform.
type Poster interface {
	PostHeartbeat(ctx context.Context, body []byte) (platform.Verdict, error)
}

// Sender delivers heartbeats from a single slot: a payload enqueued while an
// older one is waiting or in flight replaces it, so a superseded snapshot is
// never sent and at most one is ever pending.
type Sender struct {
	poster    Poster
	clk       clock.Clock
	bo        *backoff.Backoff
	log       *slog.Logger
	onVerdict func(context.Context, platform.Verdict)

	payloads *slot[[]byte]
	verdicts *slot[platform.Verdict]
	outcome  func(Outcome) // nil: nobody listens

	delivered bool // only the Run goroutine touches it
}

// SenderOptions tune a Sender; every field may be left zero.
type SenderOptions struct {
	Backoff *backoff.Backoff // after failures; nil: the docs/contract.md#backoff defaults
	Log     *slog.Logger     // nil: discard
	// OnVerdict receives every present availableUpdates verdict on a
	// goroutine of its own; it may be slow, and when it is, only the newest
	// verdict waits for it. Its context ends when Run's does, and Run
	// waits for it to return. nil: nobody listens.
	OnVerdict func(context.Context, platform.Verdict)
	// OnOutcome is told how every attempt ended, on the send goroutine, so
	// it must be quick. nil: nobody listens.
	OnOutcome func(Outcome)
}

// NewSender wires a sender that delivers through p.
func NewSender(p Poster, clk clock.Clock, opts SenderOptions) *Sender {
	bo, log := opts.Backoff, opts.Log
	if bo == nil {
		bo = backoff.New(backoff.Options{})
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{
		poster:    p,
		clk:       clk,
		bo:        bo,
		log:       log,
		onVerdict: opts.OnVerdict,
		outcome:   opts.OnOutcome,
		payloads:  newSlot[[]byte](),
		verdicts:  newSlot[platform.Verdict](),
	}
}

// Outcome is how one delivery attempt ended.
type Outcome struct {
	At  time.Time
	Err error // nil: delivered
}

// Enqueue makes body the next heartbeat to send and returns at once. The
// sender takes ownership of body; the caller must not change it afterwards.
func (s *Sender) Enqueue(body []byte) {
	s.payloads.put(body)
}

// Discard drops the payload waiting to be sent or retried, if any: when the
// observer stands down, a beat built before must not go out after. A send
// already in flight completes.
func (s *Sender) Discard() {
	s.payloads.take()
}

// Run sends until ctx is cancelled, then waits for a verdict delivery in
// progress to finish and returns nil. Call it once.
func (s *Sender) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	if s.onVerdict != nil {
		wg.Go(func() { s.deliverVerdicts(ctx) })
	}
	for {
		body, seq, ok := s.payloads.peek()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-s.payloads.ready:
				continue
			}
		}
		if !s.send(ctx, body, seq) {
			return nil
		}
	}
}

// send posts one payload and, when that fails, waits before the retry. It
// reports false once ctx is done.
func (s *Sender) send(ctx context.Context, body []byte, seq uint64) bool {
	v, err := s.poster.PostHeartbeat(ctx, body)
	if ctx.Err() != nil {
		return false
	}
	if s.outcome != nil {
		s.outcome(Outcome{At: s.clk.Now(), Err: err})
	}
	if err == nil {
		s.payloads.clearIf(seq)
		s.logDelivery(len(body))
		s.bo.Reset()
		if v.Present && s.onVerdict != nil {
			s.verdicts.put(v)
		}
		return true
	}
	plan := planRetry(err, s.bo.Next())
	s.logFailure(err, plan)
	return s.pause(ctx, plan)
}

// pause waits out a retry plan. It reports false once ctx is done.
func (s *Sender) pause(ctx context.Context, plan retryPlan) bool {
	timer := s.clk.NewTimer(plan.wait)
	defer timer.Stop()
	// A nil channel never fires, which turns off the early wake-up.
	var newer <-chan struct{}
	if plan.interruptible {
		newer = s.payloads.ready
	}
	select {
	case <-ctx.Done():
		return false
	case <-timer.C():
	case <-newer:
	}
	return true
}

// logDelivery says at info level what a user wants to know (the first beat
// got through, or beats got through again after failures) and keeps the
// routine case at debug.
func (s *Sender) logDelivery(bytes int) {
	switch failed := s.bo.Attempt(); {
	case failed > 0:
		s.log.Info("Heartbeat delivered again", "failedAttempts", failed, "bytes", bytes)
	case !s.delivered:
		s.log.Info("First heartbeat delivered", "bytes", bytes)
	default:
		s.log.Debug("Heartbeat delivered", "bytes", bytes)
	}
	s.delivered = true
}

func (s *Sender) logFailure(err error, plan retryPlan) {
	attrs := []any{"attempt", s.bo.Attempt(), "wait", plan.wait.String(), "err", err}
	var se *platform.StatusError
	if errors.As(err, &se) {
		attrs = append(attrs, "status", se.Code)
	}
	if platform.IsAuth(err) {
		attrs = append(attrs, "check", "the agent token in the identity Secret (kubectl -n kubehz-system get secret kubehz-agent, or KUBEHZ_NAMESPACE/KUBEHZ_SECRET_NAME if changed) and that CLUSTER_ID is the cluster the platform registered")
		s.log.Error("Heartbeat rejected: agent token not accepted, retrying after full backoff", attrs...)
		return
	}
	s.log.Warn("Heartbeat failed, retrying", attrs...)
}

// deliverVerdicts runs onVerdict away from the send loop, because the consumer
// writes cluster status and may take up to 15 s (docs/contract.md#g-16).
func (s *Sender) deliverVerdicts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.verdicts.ready:
			// A verdict left pending at shutdown is dropped: the next run's
			// first beat brings a fresh one.
			if v, ok := s.verdicts.take(); ok && ctx.Err() == nil {
				s.onVerdict(ctx, v)
			}
		}
	}
}
