package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/observer/internal/beat"
	"kubehz.dev/agent/observer/internal/state"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/status"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestStateFile_FailureStreakStartsAtTheFirstFailureAndEndsOnDelivery(t *testing.T) {
	h := newStateHarness(t)
	if st := h.read(t); !st.Started.Equal(t0) || !st.Beating || !st.LastAttempt.IsZero() {
		t.Fatalf("state at start: %+v", st)
	}
	h.f.delivered(beat.Outcome{At: t0.Add(time.Second)})
	h.f.delivered(beat.Outcome{At: t0.Add(time.Minute), Err: &platform.StatusError{Code: 503}})
	h.f.delivered(beat.Outcome{At: t0.Add(2 * time.Minute), Err: errors.New("dial tcp: connection refused")})
	st := h.read(t)
	if !st.FailingSince.Equal(t0.Add(time.Minute)) || st.LastOutcome != "error" ||
		st.LastError != "dial tcp: connection refused" || !st.LastDelivered.Equal(t0.Add(time.Second)) {
		t.Fatalf("while failing: %+v", st)
	}
	h.f.delivered(beat.Outcome{At: t0.Add(3 * time.Minute)})
	st = h.read(t)
	if !st.FailingSince.IsZero() || st.LastOutcome != "delivered" || !st.LastDelivered.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("after delivery: %+v", st)
	}
}

func TestStateFile_StandingDownEndsTheStreak(t *testing.T) {
	h := newStateHarness(t)
	h.f.delivered(beat.Outcome{At: t0, Err: &platform.StatusError{Code: 500}})
	h.beating = false
	h.f.turned(t0.Add(time.Second))
	st := h.read(t)
	if st.Beating || !st.FailingSince.IsZero() {
		t.Fatalf("standing down: %+v", st)
	}
}

func TestStateFile_LoopTurnsWriteOnlyOnAChangeOrOncePerInterval(t *testing.T) {
	h := newStateHarness(t)
	h.nodes = 3
	h.f.turned(t0.Add(59 * time.Second))
	if st := h.read(t); st.Caches.Nodes != 0 {
		t.Fatalf("a size change alone was written before the interval: %+v", st.Caches)
	}
	h.f.turned(t0.Add(time.Minute))
	if st := h.read(t); st.Caches.Nodes != 3 {
		t.Fatalf("nothing written after a full interval: %+v", st.Caches)
	}
	h.lease = state.ActorLease{Holder: "actor-a_01", Live: true}
	h.f.turned(t0.Add(time.Minute + time.Second))
	if st := h.read(t); st.Actor != h.lease {
		t.Fatalf("a new lease holder was not written at once: %+v", st.Actor)
	}
}

// Counting the caches copies their keys; the beat loop turns on every
// change, so the counts are taken only for a write.
func TestStateFile_CountsTheCachesOnlyWhenItWrites(t *testing.T) {
	h := newStateHarness(t)
	counted := 0
	h.f.attach(h.f.beating, func() state.Caches { counted++; return state.Caches{Nodes: 3} }, h.f.actor)
	for i := range 50 {
		h.f.turned(t0.Add(time.Duration(i) * time.Second))
	}
	if counted != 0 {
		t.Errorf("50 turns that wrote nothing counted the caches %d times, want 0", counted)
	}
	h.f.turned(t0.Add(time.Minute))
	if st := h.read(t); counted != 1 || st.Caches.Nodes != 3 {
		t.Errorf("the write after a full interval counted %d times and wrote %+v; want once and 3 nodes", counted, st.Caches)
	}
}

func TestStatusCommand_PrintsTheFileAndFailsWithoutOne(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "KUBEHZ_LIVENESS_FILE" {
			return filepath.Join(dir, "alive")
		}
		return ""
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"observer", "status"}, getenv, &out, &bytes.Buffer{})
	if !errors.Is(err, status.ErrNotStarted) {
		t.Fatalf("without a state file: err = %v, want ErrNotStarted", err)
	}
	if err := status.Write(filepath.Join(dir, status.FileName), state.Observer{Version: "v1.2.3", Beating: true}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"observer", "status"}, getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "heartbeat:       sent by this observer") {
		t.Fatalf("status printed:\n%s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"observer", "status", "--json"}, getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"version": "v1.2.3"`) {
		t.Fatalf("status --json printed:\n%s", out.String())
	}
}

func TestReadyCommand_FollowsTheThresholdSetting(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"KUBEHZ_LIVENESS_FILE": filepath.Join(dir, "alive")}
	getenv := func(k string) string { return env[k] }
	ready := func() error {
		return run(context.Background(), []string{"observer", "ready"}, getenv, &bytes.Buffer{}, &bytes.Buffer{})
	}
	failingFor := func(d time.Duration) {
		t.Helper()
		since := time.Now().Add(-d)
		st := state.Observer{Started: since, Beating: true, LastAttempt: since, LastOutcome: "HTTP 503", FailingSince: since}
		if err := status.Write(filepath.Join(dir, status.FileName), st); err != nil {
			t.Fatal(err)
		}
	}
	if err := ready(); !errors.Is(err, status.ErrNotStarted) {
		t.Fatalf("without a state file: err = %v", err)
	}
	failingFor(4 * time.Minute)
	if err := ready(); err != nil {
		t.Fatalf("failing 4m under the 5m default: %v", err)
	}
	failingFor(6 * time.Minute)
	if err := ready(); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("failing 6m over the 5m default: err = %v", err)
	}
	env["KUBEHZ_READY_AFTER_FAILING"] = "10m"
	if err := ready(); err != nil {
		t.Fatalf("failing 6m under a 10m threshold: %v", err)
	}
	env["KUBEHZ_READY_AFTER_FAILING"] = "ten minutes"
	if err := ready(); err == nil || !strings.Contains(err.Error(), "KUBEHZ_READY_AFTER_FAILING") {
		t.Fatalf("a bad threshold: err = %v", err)
	}
}
