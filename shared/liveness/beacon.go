package liveness

import (
	"log/slog"
	"sync"
	"time"
)

// Beacon writes the liveness file for a loop that marks its own progress.
// A write that fails is logged once: outside a pod the directory may not
// exist, and the probe then fails loudly on its own.
type Beacon struct {
	path string
	now  func() time.Time
	log  *slog.Logger

	mu     sync.Mutex
	warned bool
}

// Options tune a Beacon; every field may be left zero.
type Options struct {
	Now func() time.Time // nil: time.Now
	Log *slog.Logger     // nil: discard
}

// NewBeacon writes to path.
func NewBeacon(path string, opts Options) *Beacon {
	b := &Beacon{path: path, now: opts.Now, log: opts.Log}
	if b.now == nil {
		b.now = time.Now
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	return b
}

// Mark records progress now and promises the next mark within d.
func (b *Beacon) Mark(d time.Duration) { b.Until(b.now().Add(d)) }

// Until records that the loop is alive until deadline.
func (b *Beacon) Until(deadline time.Time) { b.report(Touch(b.path, deadline)) }

// Idle records that no loop is due to make progress until the next Mark.
func (b *Beacon) Idle() { b.report(Idle(b.path)) }

func (b *Beacon) report(err error) {
	if err == nil {
		return
	}
	b.mu.Lock()
	warn := !b.warned
	b.warned = true
	b.mu.Unlock()
	if warn {
		b.log.Warn("Cannot write the liveness file; the exec probe will fail", "path", b.path, "err", err)
	}
}
