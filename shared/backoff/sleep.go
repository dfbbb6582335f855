package backoff

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Sleep waits d on clk, or until ctx is done, and reports whether the whole
// wait passed. The timer is stopped on either path, so a cancelled wait
// leaves nothing behind on a fake clock's list of waiters.
func Sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
