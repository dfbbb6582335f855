package state

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/status"
)

func TestRead_ReadsBackWhatWasWritten(t *testing.T) {
	path := status.PathNextTo(filepath.Join(t.TempDir(), "alive"))
	want := Observer{Version: "v1.2.3", Started: now.Add(-time.Hour), Written: now, Beating: true,
		LastAttempt: now, LastOutcome: "delivered", LastDelivered: now,
		Caches: Caches{Nodes: 3, Pods: 42, Machines: 3, Pools: 1}, Actor: ActorLease{Holder: "actor-a_01", Live: true, Riding: 1}}
	if err := status.Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
}

func TestClamp_KeepsTheWorstCaseStateUnderTheBound(t *testing.T) {
	long := strings.Repeat("é", 10_000)
	o := Observer{Version: long, LastOutcome: long, LastError: long, Actor: ActorLease{Holder: long}}
	if err := status.Write(filepath.Join(t.TempDir(), status.FileName), o.Clamp()); err != nil {
		t.Fatalf("clamped observer state: %v", err)
	}
}
