package beat

import (
	"context"
	"fmt"
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
	// the cadence keeps turning, so a flip back beats as a change would: after
	// the debounce, and at least the min-gap after the last skipped beat.
	Beating func() bool
	// Turned, when set, is called on every turn of the loop, beat or not;
	// the liveness file is written here.
	Turned func(now time.Time)
	// Discard drops a payload still waiting in the sender.
	Discard func()
	// FirstReads are the sources the first beat waits for, up to
	// FirstReadsLimit: a first beat without one of them would tell the
	// platform to clear what it last reported.
	FirstReads      []interface{ HasSynced() bool }
	FirstReadsLimit time.Duration
}

// firstReadsPoll is how often the first beat looks at FirstReads again.
const firstReadsPoll = 20 * time.Millisecond

// Run loops until ctx is done. The caller starts Run after the informer
// caches have synced; the first beat goes out as soon as the FirstReads
// have too, or their limit has passed.
func (l *Loop) Run(ctx context.Context) error {
	if !l.awaitFirstReads(ctx) {
		return nil
	}
	// The caches' initial lists signalled changes; the first beat is a full
	// snapshot anyway, so those signals would only cause a redundant beat.
	select {
	case <-l.Changed:
	default:
	}
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

// awaitFirstReads returns once every FirstReads source has synced or
// FirstReadsLimit has passed, saying which did not; false when ctx ended
// first.
func (l *Loop) awaitFirstReads(ctx context.Context) bool {
	deadline := l.Clock.Now().Add(l.FirstReadsLimit)
	var poll clock.Timer
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	for {
		var waiting []string
		for _, s := range l.FirstReads {
			if !s.HasSynced() {
				waiting = append(waiting, fmt.Sprintf("%T", s))
			}
		}
		if len(waiting) == 0 {
			return true
		}
		if !l.Clock.Now().Before(deadline) {
			l.Log.Warn("First beat without every first read: the platform may clear what these report until the next beat",
				"waited", l.FirstReadsLimit, "unsynced", waiting)
			return true
		}
		if poll == nil {
			poll = l.Clock.NewTimer(firstReadsPoll)
		} else {
			poll.Reset(firstReadsPoll)
		}
		select {
		case <-ctx.Done():
			return false
		case <-poll.C():
		}
	}
}
