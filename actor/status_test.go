package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

func TestStateFile_FollowsATermFromStandbyToLeaderAndBack(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "KUBEHZ_LIVENESS_FILE" {
			return filepath.Join(dir, "alive")
		}
		return ""
	}
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f := newStateFile(status.PathNextTo(livenessPath(getenv)), "actor-a_01", "v1.2.3", started, slog.New(slog.DiscardHandler))
	read := func() replicaState {
		t.Helper()
		st, err := readReplicaState(f.path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	f.holder("actor-b_02")
	if st := read(); st.Leading || st.LeaseHolder != "actor-b_02" || !st.Started.Equal(started) {
		t.Fatalf("standby: %+v", st)
	}

	f.holder("actor-a_01")
	f.leading(func() cacheSizes { return cacheSizes{MachineDeployments: 2, Machines: 3, Nodes: 3} })
	f.polled(desired.PollResult{At: started.Add(time.Minute), Outcome: "new document"})
	publisher := recordedPublisher{Publisher: failingPublisher{}, state: f}
	actions := []wire.Action{{Type: "scale", Target: "workers", Status: "done", Detail: "2 → 3 replicas", Revision: 7}}
	if err := publisher.Publish(context.Background(), 7, actions); err != nil {
		t.Fatal(err)
	}
	st := read()
	want := []reportLine{{Action: "scale", Pool: "workers", Status: "done", Detail: "2 → 3 replicas"}}
	if !st.Leading || st.Revision != 7 || len(st.Reports) != 1 || st.Reports[0] != want[0] ||
		st.Caches.Nodes != 3 || st.LastPollOutcome != "new document" || st.LastError != "" {
		t.Fatalf("leading: %+v", st)
	}

	f.polled(desired.PollResult{At: started.Add(2 * time.Minute), Outcome: "HTTP 503", Err: &platform.StatusError{Code: 503}})
	_ = recordedPublisher{Publisher: failingPublisher{err: context.Canceled}, state: f}.Publish(context.Background(), 7, actions)
	f.leading(nil)
	st = read()
	if st.Leading || st.Caches != (cacheSizes{}) || st.LastPollOutcome != "HTTP 503" ||
		!st.LastErrorAt.Equal(started.Add(2*time.Minute)) {
		t.Fatalf("after the term: %+v", st)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"actor", "status"}, getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "leading:              no (standby)") || !strings.Contains(out.String(), "  scale  workers  done  2 → 3 replicas") {
		t.Fatalf("actor status printed:\n%s", out.String())
	}
}

func TestStatusCommand_FailsClearlyBeforeTheActorStarted(t *testing.T) {
	getenv := func(k string) string {
		if k == "KUBEHZ_LIVENESS_FILE" {
			return filepath.Join(t.TempDir(), "alive")
		}
		return ""
	}
	err := run(context.Background(), []string{"actor", "status"}, getenv, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, status.ErrNotStarted) {
		t.Fatalf("err = %v, want ErrNotStarted", err)
	}
}

// A mistyped subcommand is refused before anything else: falling through
// would start another replica campaigning for the Lease.
func TestRun_UnknownSubcommandExitsTwoWithoutStarting(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"actor", "stauts"}, func(string) string { return "" }, &stdout, &stderr)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || len(cfgErr.Problems) != 1 || cfgErr.Problems[0].Var != "command" {
		t.Fatalf("err = %v, want only the unknown-command problem (no configuration was read)", err)
	}
	if config.ExitCode(err) != 2 || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and nothing written", config.ExitCode(err), stdout.String(), stderr.String())
	}
}
