// Package testrun runs a component for the length of a test, for the
// observer's package tests.
package testrun

import (
	"context"
	"testing"
	"time"
)

// Until calls run in its own goroutine until t ends, then cancels it and
// fails t unless run returns nil within patience: a component whose Run
// hangs after cancel, or reports an error for it, is a bug of its own.
func Until(t *testing.T, patience time.Duration, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil on cancel", err)
			}
		case <-time.After(patience):
			t.Error("Run did not return after cancel")
		}
	})
}
