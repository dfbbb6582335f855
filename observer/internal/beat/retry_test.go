package beat

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"kubehz.dev/agent/shared/platform"
)

func TestPlanRetry_OnlyTransportAndServerFaultsWakeEarly(t *testing.T) {
	const next = 2 * time.Second
	status := func(code int, after time.Duration) error {
		return &platform.StatusError{Code: code, RetryAfter: after}
	}
	tests := []struct {
		name string
		err  error
		want retryPlan
	}{
		{"transport error", errors.New("dial tcp: connection refused"), retryPlan{wait: next, interruptible: true}},
		{"500", status(500, 0), retryPlan{wait: next, interruptible: true}},
		{"wrapped 502", fmt.Errorf("post heartbeat: %w", status(502, 0)), retryPlan{wait: next, interruptible: true}},
		{"504", status(504, 0), retryPlan{wait: next, interruptible: true}},
		{"401", status(401, 0), retryPlan{wait: next}},
		{"wrapped 403", fmt.Errorf("post heartbeat: %w", status(403, 0)), retryPlan{wait: next}},
		{"400", status(400, 0), retryPlan{wait: next}},
		{"404", status(404, 0), retryPlan{wait: next}},
		{"409", status(409, 0), retryPlan{wait: next}},
		{"429 without Retry-After", status(429, 0), retryPlan{wait: next}},
		{"503 without Retry-After", status(503, 0), retryPlan{wait: next}},
		{"429 Retry-After longer than backoff", status(429, 3*time.Second), retryPlan{wait: 3 * time.Second}},
		{"503 Retry-After longer than backoff", status(503, 5*time.Minute), retryPlan{wait: 5 * time.Minute}},
		{"429 Retry-After shorter than backoff", status(429, time.Second), retryPlan{wait: next}},
		{"429 Retry-After equal to backoff", status(429, next), retryPlan{wait: next}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planRetry(tt.err, next); got != tt.want {
				t.Errorf("planRetry() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
