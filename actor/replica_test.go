package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

func sample() replicaState {
	return replicaState{Version: "v1.2.3", Identity: "actor-a_01", Started: now.Add(-time.Hour), Written: now,
		Leading: true, LeaseHolder: "actor-a_01", LastPoll: now, LastPollOutcome: "unchanged", Revision: 7,
		Reports: []reportLine{{Action: "scale", Pool: "workers", Status: "done", Detail: "2 → 3 replicas"}},
		Caches:  cacheSizes{MachineDeployments: 1, Machines: 3, Nodes: 3}}
}

func TestReadReplicaState_ReadsBackWhatWasWritten(t *testing.T) {
	path := status.PathNextTo(filepath.Join(t.TempDir(), "alive"))
	want := sample()
	if err := status.Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := readReplicaState(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
}

func TestDecodeReplicaState_TruncatedFileIsUnreadableAtEveryLength(t *testing.T) {
	b, err := json.Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := decodeReplicaState(b[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes decoded", n, len(b))
		}
	}
}

func TestReplicaStateClamp_KeepsTheWorstCaseStateUnderTheBound(t *testing.T) {
	long := strings.Repeat("é", 10_000)
	a := replicaState{Version: long, Identity: long, LeaseHolder: long, LastPollOutcome: long, LastError: long}
	for range 100 {
		a.Reports = append(a.Reports, reportLine{Action: long, Pool: long, Status: long, Detail: long})
	}
	if err := status.Write(filepath.Join(t.TempDir(), status.FileName), a.Clamp()); err != nil {
		t.Fatalf("clamped actor state: %v", err)
	}
	if got := len(a.Clamp().Reports); got != 20 {
		t.Fatalf("clamped to %d reports, want 20", got)
	}
}

func TestReportsFrom_CarriesAtMostTheHandOffsActions(t *testing.T) {
	actions := make([]wire.Action, 25)
	for i := range actions {
		actions[i] = wire.Action{Type: "scale", Target: "workers", Status: "done", Detail: "2 → 3 replicas"}
	}
	got := reportsFrom(actions)
	if len(got) != 20 {
		t.Fatalf("converted %d actions, want 20", len(got))
	}
	if want := (reportLine{Action: "scale", Pool: "workers", Status: "done", Detail: "2 → 3 replicas"}); got[0] != want {
		t.Errorf("first report = %+v, want %+v", got[0], want)
	}
}
