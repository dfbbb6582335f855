package main

import (
	"log/slog"
	"sync"
	"time"

	"kubehz.dev/agent/shared/liveness"
)

// Liveness deadlines. The loop turns at least once per full interval, so
// three intervals without a turn mean it is wedged, not quiet. Before the
// loop starts, the initial list of a large cluster may take minutes.
const (
	startupGrace  = 10 * time.Minute
	missedTurns   = 3
	maxTouchEvery = 5 * time.Second // bounds file writes under heavy churn
)

func livenessPath(getenv func(string) string) string {
	if p := getenv("KUBEHZ_LIVENESS_FILE"); p != "" {
		return p
	}
	return liveness.DefaultPath
}

// aliveFile keeps the liveness file fresh. Outside a pod the directory may not
// exist; that is worth one warning, not a failure.
type aliveFile struct {
	path     string
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	last   time.Time
	warned bool
}

func (a *aliveFile) start(now time.Time) { a.write(now.Add(startupGrace)) }

func (a *aliveFile) turned(now time.Time) {
	a.mu.Lock()
	due := now.Sub(a.last) >= min(maxTouchEvery, a.interval/2)
	if due {
		a.last = now
	}
	a.mu.Unlock()
	if due {
		a.write(now.Add(missedTurns * a.interval))
	}
}

func (a *aliveFile) write(deadline time.Time) {
	if err := liveness.Touch(a.path, deadline); err != nil {
		a.mu.Lock()
		warn := !a.warned
		a.warned = true
		a.mu.Unlock()
		if warn {
			a.log.Warn("Cannot write the liveness file; the exec probe will fail", "path", a.path, "err", err)
		}
	}
}
