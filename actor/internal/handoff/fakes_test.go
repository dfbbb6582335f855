package handoff_test

import (
	"context"
	"time"

	"kubehz.dev/agent/actor/internal/handoff"
)

var _ handoff.Fence = (*fakeFence)(nil)

// fakeFence grants every write a short deadline, or refuses with err.
type fakeFence struct {
	err   error
	calls int
}

func (f *fakeFence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	f.calls++
	if f.err != nil {
		return nil, nil, f.err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	return wctx, cancel, nil
}
