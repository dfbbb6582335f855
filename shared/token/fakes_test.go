package token

import (
	"context"
	"sync"
)

// fakeSecret stands in for the API fallback and counts GETs.
type fakeSecret struct {
	mu    sync.Mutex
	val   string
	err   error
	calls int
}

func (f *fakeSecret) set(val string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.val, f.err = val, err
}

func (f *fakeSecret) read(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.val, f.err
}

func (f *fakeSecret) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
