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

func sampleObserver() Observer {
	return Observer{Version: "v1.2.3", Started: now.Add(-time.Hour), Written: now, Beating: true,
		LastAttempt: now, LastOutcome: "delivered", LastDelivered: now,
		Caches: ObserverCaches{Nodes: 3, Pods: 42, Machines: 3, Pools: 1}, Actor: ActorLease{Holder: "actor-a_01", Live: true, Riding: 1}}
}

func TestWrite_ReadsBackWhatWasWritten(t *testing.T) {
	path := PathNextTo(filepath.Join(t.TempDir(), "alive"))
	want := sampleObserver()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadObserver(path)
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
	b, err := json.Marshal(sampleObserver())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := DecodeObserver(b[:n]); err == nil {
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
	o := Observer{Version: long, LastOutcome: long, LastError: long, Actor: ActorLease{Holder: long}}
	if err := Write(filepath.Join(t.TempDir(), FileName), o.Clamp()); err != nil {
		t.Fatalf("clamped observer state: %v", err)
	}
}
