package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fakePlatform stands in for the kubehz API and counts every request; none
// of these tests may reach it.
type fakePlatform struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newFakePlatform(t *testing.T) *fakePlatform {
	t.Helper()
	p := &fakePlatform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakePlatform) assertUntouched(t *testing.T) {
	t.Helper()
	if n := p.hits.Load(); n != 0 {
		t.Errorf("platform got %d requests, want none", n)
	}
}
