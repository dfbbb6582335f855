package status

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleActor() Actor {
	return Actor{Version: "v1.2.3", Identity: "actor-a_01", Started: now.Add(-time.Hour), Written: now,
		Leading: true, LeaseHolder: "actor-a_01", LastPoll: now, LastPollOutcome: "unchanged", Revision: 7,
		Reports: []Report{{Action: "scale", Pool: "workers", Status: "done", Detail: "2 → 3 replicas"}},
		Caches:  ActorCaches{MachineDeployments: 1, Machines: 3, Nodes: 3}}
}

func TestWrite_ReadsBackWhatWasWritten(t *testing.T) {
	path := PathNextTo(filepath.Join(t.TempDir(), "alive"))
	want := sampleActor()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadActor(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temp file was left behind: %v", err)
	}
}

func TestRead_MissingFileSaysNotStarted(t *testing.T) {
	_, err := ReadObserver(filepath.Join(t.TempDir(), FileName))
	if !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "has not started") {
		t.Fatalf("err = %v, want ErrNotStarted with a hint", err)
	}
}

func TestRead_TruncatedFileIsUnreadableAtEveryLength(t *testing.T) {
	b, err := json.Marshal(sampleActor())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := DecodeActor(b[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes decoded", n, len(b))
		}
	}
}

func TestRead_RefusesAFileOverTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	big := `{"version":"` + strings.Repeat("x", MaxBytes) + `"}`
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadObserver(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want the size bound", err)
	}
}

func TestClamp_KeepsTheWorstCaseStateUnderTheBound(t *testing.T) {
	long := strings.Repeat("é", 10_000)
	a := Actor{Version: long, Identity: long, LeaseHolder: long, LastPollOutcome: long, LastError: long}
	for range 100 {
		a.Reports = append(a.Reports, Report{Action: long, Pool: long, Status: long, Detail: long})
	}
	o := Observer{Version: long, LastOutcome: long, LastError: long, Actor: ActorLease{Holder: long}}
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "actor"), a.Clamp()); err != nil {
		t.Fatalf("clamped actor state: %v", err)
	}
	if err := Write(filepath.Join(dir, "observer"), o.Clamp()); err != nil {
		t.Fatalf("clamped observer state: %v", err)
	}
	if got := len(a.Clamp().Reports); got != 20 {
		t.Fatalf("clamped to %d reports, want 20", got)
	}
}
