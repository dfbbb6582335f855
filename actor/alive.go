package main

import (
	"time"

	"kubehz.dev/agent/shared/liveness"
)

// Liveness deadlines. Every request the actor makes is bounded (15 s to the
// platform and the apiserver, less under the fence), and one step makes at
// most four (the lease, the Deployment, the write, its Event), so a loop
// that has not started its next step a minute after the last one is wedged.
// Before the first term the token may be read through the API and the
// kill switch's first list may be slow on a loaded apiserver.
const (
	stepGrace    = time.Minute
	startupGrace = 5 * time.Minute
)

func livenessPath(getenv func(string) string) string {
	if p := getenv("KUBEHZ_LIVENESS_FILE"); p != "" {
		return p
	}
	return liveness.DefaultPath
}

// progress turns the work loop's reports into liveness deadlines. A standby
// has no loop that must turn, so outside a term the file says idle: only a
// leader whose work stopped moving, while its lease is still renewed on
// another goroutine, fails the probe and is restarted, which frees the lease
// for the standby.
type progress struct{ beacon *liveness.Beacon }

func (p progress) Step()                   { p.beacon.Mark(stepGrace) }
func (p progress) Waiting(d time.Duration) { p.beacon.Mark(d + stepGrace) }
func (p progress) Idle()                   { p.beacon.Idle() }
