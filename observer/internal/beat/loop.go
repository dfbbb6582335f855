package beat

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/utils/clock"
)

// Builder renders the current snapshot, capped and encoded, as of now.
type Builder func(now time.Time) ([]byte, error)

// Loop is the coalescer: it turns change signals and the periodic timer into
// beats, as Decide says, and hands each one to the sender without waiting.
type Loop struct {
	Cadence Cadence
	Clock   clock.Clock
	Changed <-chan struct{}
	Build   Builder
	Enqueue func([]byte)
	Log     *slog.Logger
	// Beat, when set, is called after every enqueued beat.
	Beat func(now time.Time)
	// Beating, when set, says whether this observer owns the heartbeat. When
	// it does not, due beats are skipped (and any pending one dropped) but
	// the cadence keeps turning, so a flip back beats within one debounce.
	Beating func() bool
	// Turned, when set, is called on every turn of the loop, beat or not;
	// the liveness file is written here.
	Turned func(now time.Time)
	// Discard drops a payload still waiting in the sender.
	Discard func()
}

// Run loops until ctx is done. The first beat goes out at once: the caller
// starts Run after the informer caches have synced.
func (l *Loop) Run(ctx context.Context) error {
	var st State
	timer := l.Clock.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-l.Changed:
			if st.FirstDirty.IsZero() {
				st.FirstDirty = l.Clock.Now()
			}
		case <-timer.C():
		}
		now := l.Clock.Now()
		d := Decide(st, l.Cadence, now)
		if l.Turned != nil {
			l.Turned(now)
		}
		standDown := l.Beating != nil && !l.Beating()
		if d.Push && standDown {
			if l.Discard != nil {
				l.Discard()
			}
			st = State{LastPush: now}
		} else if d.Push {
			body, err := l.Build(now)
			if err != nil {
				// A snapshot that cannot be encoded is a bug, not a transient
				// fault; skip this beat and say why, the next one may differ.
				l.Log.Error("Cannot build heartbeat", "err", err, "reason", d.Reason)
			} else {
				l.Enqueue(body)
				l.Log.Debug("Heartbeat queued", "reason", d.Reason, "bytes", len(body))
				if l.Beat != nil {
					l.Beat(now)
				}
			}
			st = State{LastPush: now}
		}
		if !timer.Stop() {
			select {
			case <-timer.C():
			default:
			}
		}
		timer.Reset(d.Wait)
	}
}
