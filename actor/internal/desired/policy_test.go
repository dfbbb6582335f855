package desired

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"kubehz.dev/agent/shared/platform"
)

func TestSteadyWait_AddsUpToTenPercent(t *testing.T) {
	tests := []struct {
		jitter float64
		want   time.Duration
	}{
		{0, 60 * time.Second},
		{0.5, 63 * time.Second},
		{0.999, 65994 * time.Millisecond},
		{1, 66 * time.Second},
		{7, 66 * time.Second},
		{-1, 60 * time.Second},
		{math.NaN(), 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.jitter), func(t *testing.T) {
			if got := steadyWait(60*time.Second, tt.jitter); got != tt.want {
				t.Errorf("steadyWait(60s, %v) = %s, want %s", tt.jitter, got, tt.want)
			}
		})
	}
}

func TestNewPoller_NonPositiveIntervalBecomesSixtySeconds(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if p := NewPoller(nil, nil, nil, PollOptions{Interval: d}); p.interval != DefaultPollInterval || DefaultPollInterval != 60*time.Second {
			t.Errorf("NewPoller(interval %s).interval = %s, want 60s", d, p.interval)
		}
	}
}

func TestFailureWait_HonoursRetryAfterUpToFiveMinutes(t *testing.T) {
	ra := func(d time.Duration) error { return &platform.StatusError{Code: 429, RetryAfter: d} }
	tests := []struct {
		name string
		step time.Duration
		err  error
		want time.Duration
	}{
		{"no Retry-After", 4 * time.Second, status(500), 4 * time.Second},
		{"transport error", 4 * time.Second, errors.New("reset"), 4 * time.Second},
		{"Retry-After longer", 4 * time.Second, ra(9 * time.Second), 9 * time.Second},
		{"Retry-After shorter", 4 * time.Second, ra(time.Second), 4 * time.Second},
		{"Retry-After exactly 5 min", time.Second, ra(5 * time.Minute), 5 * time.Minute},
		{"Retry-After one past 5 min", time.Second, ra(5*time.Minute + time.Nanosecond), 5 * time.Minute},
		{"nil error", 2 * time.Second, nil, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureWait(tt.step, tt.err); got != tt.want {
				t.Errorf("failureWait(%s, %v) = %s, want %s", tt.step, tt.err, got, tt.want)
			}
		})
	}
}

func TestWithdrawn_OnlyARefusalWithdrawsAuthorization(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{status(400), true},
		{status(401), true},
		{status(403), true},
		{status(404), true},
		{status(410), true},
		{status(499), true},
		{fmt.Errorf("fetch: %w", status(403)), true},
		{status(408), false},
		{status(429), false},
		{status(500), false},
		{status(503), false},
		{&platform.RedirectError{Code: 301}, false},
		{errors.New("dial tcp: i/o timeout"), false},
		{nil, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.err), func(t *testing.T) {
			if got := withdrawn(tt.err); got != tt.want {
				t.Errorf("withdrawn(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}
