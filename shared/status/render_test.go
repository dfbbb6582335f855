package status

import (
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestAgo_UnitsAtTheirBoundaries(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s ago"},
		{59*time.Second + 999*time.Millisecond, "59s ago"},
		{time.Minute, "1m00s ago"},
		{time.Hour - time.Second, "59m59s ago"},
		{time.Hour, "1h00m ago"},
		{24*time.Hour - time.Minute, "23h59m ago"},
		{24 * time.Hour, "1d00h ago"},
		{-3 * time.Second, "in 3s (clocks disagree)"},
	}
	for _, tc := range cases {
		if got := Ago(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("Ago(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := Ago(time.Time{}, now); got != "never" {
		t.Errorf("Ago(zero) = %q, want never", got)
	}
}

func TestOutcome_NeverOrTheAgeAndHowItWent(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	if got := Outcome(time.Time{}, now, "ok"); got != "never" {
		t.Errorf("zero time: %q, want never", got)
	}
	if got := Outcome(now.Add(-90*time.Second), now, "503 Service Unavailable"); got != "1m30s ago, 503 Service Unavailable" {
		t.Errorf("90 s ago: %q", got)
	}
}
