package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"kubehz.dev/agent/observer/internal/state"
	"kubehz.dev/agent/shared/status"
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

// stateHarness is a stateFile whose parts the test sets.
type stateHarness struct {
	f       *stateFile
	beating bool
	lease   state.ActorLease
	nodes   int
}

func newStateHarness(t *testing.T) *stateHarness {
	h := &stateHarness{beating: true}
	h.f = newStateFile(filepath.Join(t.TempDir(), status.FileName), t0, "v1.2.3", time.Minute, slog.New(slog.DiscardHandler))
	h.f.attach(func() bool { return h.beating }, func() state.Caches { return state.Caches{Nodes: h.nodes} },
		func(time.Time) state.ActorLease { return h.lease })
	return h
}

func (h *stateHarness) read(t *testing.T) state.Observer {
	t.Helper()
	st, err := state.Read(h.f.path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
