package state

import (
	"testing"
	"time"
)

func TestReady_FailsOnlyAfterDeliveryFailedLongerThanTheThreshold(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const after = 5 * time.Minute
	failing := func(since time.Time) Observer {
		return Observer{Started: start, Beating: true, LastAttempt: since.Add(time.Second), LastOutcome: "HTTP 503",
			FailingSince: since, LastError: "platform answered 503"}
	}
	delivered := Observer{Started: start, Beating: true, LastAttempt: start.Add(time.Minute), LastOutcome: "delivered",
		LastDelivered: start.Add(time.Minute)}
	notYet := Observer{Started: start, Beating: true}
	standingDown := failing(start)
	standingDown.Beating = false
	cases := []struct {
		name  string
		state Observer
		now   time.Time
		ready bool
	}{
		{"delivered, long ago", delivered, start.Add(24 * time.Hour), true},
		{"failing, just begun", failing(start), start.Add(time.Second), true},
		{"failing for exactly the threshold", failing(start), start.Add(5 * time.Minute), true},
		{"failing one nanosecond past the threshold", failing(start), start.Add(5*time.Minute + 1), false},
		{"failing for an hour", failing(start), start.Add(time.Hour), false},
		{"no attempt yet, within the grace", notYet, start.Add(5 * time.Minute), true},
		{"no attempt yet, past the grace", notYet, start.Add(5*time.Minute + 1), false},
		{"standing down for the CronJob while failing", standingDown, start.Add(time.Hour), true},
		{"standing down before any attempt", Observer{Started: start}, start.Add(time.Hour), true},
		{"an empty state file", Observer{}, start, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Ready(tc.state, tc.now, after)
			if (err == nil) != tc.ready {
				t.Fatalf("Ready = %v, want ready=%v", err, tc.ready)
			}
		})
	}
}
