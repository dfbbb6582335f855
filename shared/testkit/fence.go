package testkit

import (
	"context"
	"time"
)

// Fence stands for the actor's lease fence: it grants every write a
// 10-second deadline and counts the checks, or refuses every write with Err.
type Fence struct {
	Err   error
	Calls int
}

// Write has the signature of the fence each actor package declares.
func (f *Fence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	f.Calls++
	if f.Err != nil {
		return nil, nil, f.Err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	return wctx, cancel, nil
}
