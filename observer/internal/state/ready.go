package state

import (
	"fmt"
	"time"
)

// Ready is the readiness rule: nil unless heartbeat delivery has failed
// continuously for longer than after at now. Before the first attempt the
// process start stands in for the first failure, so an observer that never
// gets a beat out (its token never arrives, its caches never sync) turns
// not ready after the same time, and one that is merely starting is given
// that time. An observer standing down for the lok8s CronJob sends
// nothing by design and is ready.
func Ready(s Observer, now time.Time, after time.Duration) error {
	if !s.Beating {
		return nil
	}
	since := s.FailingSince
	if since.IsZero() && s.LastAttempt.IsZero() {
		since = s.Started
	}
	if since.IsZero() {
		return nil
	}
	if failing := now.Sub(since); failing > after {
		if s.LastAttempt.IsZero() {
			return fmt.Errorf("no heartbeat sent in the %s since the observer started (more than %s); run `observer status` and read the logs",
				failing.Truncate(time.Second), after)
		}
		return fmt.Errorf("heartbeat delivery failing for %s (more than %s), last %s: %s; run `observer status` and read the logs",
			failing.Truncate(time.Second), after, s.LastOutcome, s.LastError)
	}
	return nil
}
