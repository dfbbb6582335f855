package beat

import "time"

// Reasons a push is due. They only ever reach logs.
const (
	ReasonChange    = "change"
	ReasonPeriodic  = "periodic"
	ReasonColdStart = "cold-start"
)

// minWait keeps a timer re-armed for a due time that has just slipped into
// the past from firing in a tight loop.
const minWait = time.Millisecond

// Cadence holds the three intervals that shape the beat rhythm.
type Cadence struct {
	// Full is the longest the platform goes without a snapshot.
	Full time.Duration
	// Debounce lets a burst of changes settle before it is reported.
	Debounce time.Duration
	// MinGap bounds the push rate however busy the cluster is.
	MinGap time.Duration
}

// State is what the coalescer remembers between evaluations.
type State struct {
	// LastPush is the time of the last push of any kind; zero means never.
	LastPush time.Time
	// FirstDirty is the time of the first change not yet pushed; zero means
	// clean. It is the first, not the latest, so a long rollout that keeps
	// changing things cannot starve the beat.
	FirstDirty time.Time
}

// Decision says whether to push now and how long to sleep before asking
// again.
type Decision struct {
	Push bool
	// Wait is Full after a push, otherwise the time until the next due push,
	// never below one millisecond and never above Full: the loop marks itself
	// alive on every turn, and its liveness deadline counts in full
	// intervals, so a min-gap longer than the full interval must not put it
	// to sleep past that deadline.
	Wait time.Duration
	// Reason names the deadline that fired or, when waiting, the one that
	// will.
	Reason string
}

// Decide applies the cadence rule at now. Every push is a full snapshot, so
// the periodic clock restarts at LastPush whatever caused that push.
func Decide(s State, c Cadence, now time.Time) Decision {
	if s.LastPush.IsZero() {
		return Decision{Push: true, Wait: c.Full, Reason: ReasonColdStart}
	}
	gapEnd := s.LastPush.Add(c.MinGap)
	due, reason := later(s.LastPush.Add(c.Full), gapEnd), ReasonPeriodic
	if !s.FirstDirty.IsZero() {
		changeDue := later(s.FirstDirty.Add(c.Debounce), gapEnd)
		// A settled change wins the label even when the periodic deadline is
		// earlier, since the change is what this push reports.
		if !changeDue.After(now) || changeDue.Before(due) {
			due, reason = changeDue, ReasonChange
		}
	}
	if !due.After(now) {
		return Decision{Push: true, Wait: c.Full, Reason: reason}
	}
	return Decision{Wait: min(max(due.Sub(now), minWait), c.Full), Reason: reason}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
