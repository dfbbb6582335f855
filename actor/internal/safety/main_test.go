package safety_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a fence grant's context or anything else
// the executor starts outlives the scenarios.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
