package main

import (
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

// aliveFile keeps the liveness file fresh, at most every maxTouchEvery.
type aliveFile struct {
	beacon   *liveness.Beacon
	interval time.Duration

	mu   sync.Mutex
	last time.Time
}

func (a *aliveFile) start(now time.Time) { a.beacon.Until(now.Add(startupGrace)) }

func (a *aliveFile) turned(now time.Time) {
	a.mu.Lock()
	due := now.Sub(a.last) >= min(maxTouchEvery, a.interval/2)
	if due {
		a.last = now
	}
	a.mu.Unlock()
	if due {
		a.beacon.Until(now.Add(missedTurns * a.interval))
	}
}
