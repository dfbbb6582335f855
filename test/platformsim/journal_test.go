package platformsim

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestJournal_KeepsOnlyTheNewestRecords(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	var hooked atomic.Int64
	h := start(t, Options{
		MaxRecords: 3,
		Now:        func() time.Time { return now },
		OnRequest:  func(Request) { hooked.Add(1) },
	})
	for i := range 8 {
		if i%2 == 0 {
			h.beat(validBeat())
		} else {
			h.must(http.MethodGet, desiredPath, DefaultToken, nil, nil)
		}
	}
	seqs := func(list []Request) []uint64 {
		var out []uint64
		for _, r := range list {
			out = append(out, r.Seq)
		}
		return out
	}
	if got := seqs(h.sim.Requests()); !slices.Equal(got, []uint64{6, 7, 8}) {
		t.Errorf("requests kept %v, want [6 7 8]", got)
	}
	if got := seqs(h.sim.Beats()); !slices.Equal(got, []uint64{3, 5, 7}) {
		t.Errorf("beats kept %v, want [3 5 7]", got)
	}
	if h.sim.Seq() != 8 || hooked.Load() != 8 || !h.sim.Requests()[0].Time.Equal(now) {
		t.Errorf("seq %d, hook calls %d, time %v", h.sim.Seq(), hooked.Load(), h.sim.Requests()[0].Time)
	}
	h.sim.ResetRecords()
	if len(h.sim.Requests())+len(h.sim.Beats()) != 0 || h.sim.Seq() != 8 {
		t.Error("ResetRecords kept records or reset the sequence")
	}
}

func TestJournal_WaitBeatSeesKeptAndLaterBeats(t *testing.T) {
	h := start(t, Options{})
	h.beat(validBeat())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if b, err := h.sim.WaitBeat(ctx, nil); err != nil || b.Seq != 1 {
		t.Fatalf("kept beat: %d, %v", b.Seq, err)
	}

	mark := h.sim.Seq()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.must(http.MethodGet, desiredPath, DefaultToken, nil, nil) // not a beat
		h.beat(set(validBeat(), "nodes", nil))                      // refused
		h.beat(set(validBeat(), "timestamp", "2026-07-06T09:20:00Z"))
	}()
	b, err := h.sim.WaitBeat(ctx, func(b Beat) bool { return b.Seq > mark })
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := b.Lookup("timestamp"); b.Seq != 4 || ts != "2026-07-06T09:20:00Z" {
		t.Errorf("waited beat Seq %d timestamp %v; want 4 and the later timestamp", b.Seq, ts)
	}

	short, stop := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer stop()
	if _, err := h.sim.WaitBeat(short, func(b Beat) bool { return b.Seq > 4 }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitBeat with nothing coming: %v, want DeadlineExceeded", err)
	}
}

func TestServer_StartAndCloseLifecycle(t *testing.T) {
	unstarted := New(Options{})
	unstarted.Close()
	if _, err := unstarted.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
	sim := New(Options{})
	url, err := sim.Start()
	if err != nil || url != sim.URL() {
		t.Fatalf("Start = %q, %v; URL %q", url, err, sim.URL())
	}
	if _, err := sim.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	sim.Close()
	sim.Close()
	if _, err := New(Options{Listen: "256.0.0.1:0"}).Start(); err == nil {
		t.Error("Start on a bad address succeeded")
	}
}
