// Package backoff is the capped, fully jittered exponential backoff shared by
// the heartbeat sender and the desired-state poller, and the cancellable
// sleep the agents' retry and poll loops wait with.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Fallbacks for a non-positive base or max.
const (
	DefaultBase = time.Second
	DefaultMax  = 5 * time.Minute
)

// Backoff counts consecutive failures and turns them into waits. It is not
// safe for concurrent use: each retry loop owns its own, and a lock would
// only hide a second goroutine that has no business sharing the count.
type Backoff struct {
	base, max time.Duration
	jitter    func() float64
	attempt   int
}

// Options shape a Backoff; every field may be left zero.
type Options struct {
	Base   time.Duration  // the first wait; zero or less: DefaultBase
	Max    time.Duration  // the cap; zero or less: DefaultMax; below Base: Base
	Jitter func() float64 // a factor in [0, 1); nil: math/rand/v2's Float64
}

// New returns a Backoff at attempt 0.
func New(opts Options) *Backoff {
	base, max, jitter := opts.Base, opts.Max, opts.Jitter
	if base <= 0 {
		base = DefaultBase
	}
	if max <= 0 {
		max = DefaultMax
	}
	if max < base {
		max = base
	}
	if jitter == nil {
		jitter = rand.Float64
	}
	return &Backoff{base: base, max: max, jitter: jitter}
}

// Next returns the wait before retrying after one more failure and counts
// that failure. For attempt k the wait is jitter × min(base·2^k, max), then
// forced into [base, max]: the floor keeps a zero draw from turning into a
// hot loop, and full jitter spreads a fleet of agents that all lost the
// platform at the same moment.
func (b *Backoff) Next() time.Duration {
	ceiling := b.max
	// base << k is exact and below max exactly when base <= max >> k; a shift
	// of 63 or more gives 0, so a long outage cannot overflow.
	if b.base <= b.max>>b.attempt {
		ceiling = b.base << b.attempt
	}
	b.attempt++

	j := b.jitter()
	if !(j > 0) { // also catches NaN, whose conversion is undefined
		return b.base
	}
	// Compare as floats: a product at or near 2^63 does not convert back.
	wait := j * float64(ceiling)
	if wait >= float64(b.max) {
		return b.max
	}
	return max(time.Duration(wait), b.base)
}

// Reset returns to attempt 0, after any success.
func (b *Backoff) Reset() { b.attempt = 0 }

// Attempt is the number of failures counted since New or the last Reset.
func (b *Backoff) Attempt() int { return b.attempt }
