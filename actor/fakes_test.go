package main

import (
	"context"
	"errors"
	"sync"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/wire"
)

// openFence lets every write through, as a fence of a live term does.
type openFence struct{}

func (openFence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, cancel, nil
}

// closedFence refuses every write, as the fence of a term that ended does.
type closedFence struct{}

func (closedFence) Write(context.Context) (context.Context, context.CancelFunc, error) {
	return nil, nil, errors.New("lost the actor lease")
}

// wedgingFetcher answers its first calls with 304 and then never returns
// until the caller gives up.
type wedgingFetcher struct {
	mu      sync.Mutex
	n       int
	answers int
}

func (f *wedgingFetcher) GetDesired(ctx context.Context, _ string) (platform.DesiredResponse, error) {
	f.mu.Lock()
	f.n++
	wedged := f.n > f.answers
	f.mu.Unlock()
	if wedged {
		<-ctx.Done()
		return platform.DesiredResponse{}, ctx.Err()
	}
	return platform.DesiredResponse{NotModified: true}, nil
}

func (f *wedgingFetcher) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

type nopExecutor struct{}

func (nopExecutor) Execute(context.Context, desired.Document) bool { return false }

func (nopExecutor) Clear(string) {}

func (nopExecutor) Flush(context.Context) {}

type failingPublisher struct{ err error }

func (p failingPublisher) Publish(context.Context, int64, []wire.Action) error { return p.err }
