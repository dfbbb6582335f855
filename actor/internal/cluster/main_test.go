package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when an informer outlives its test: Stop must
// end every goroutine Ensure started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
