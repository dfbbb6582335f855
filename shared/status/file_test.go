package status

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWrite_ReadsBackWhatWasWritten(t *testing.T) {
	path := PathNextTo(filepath.Join(t.TempDir(), "alive"))
	want := sampleState()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read[sample](path)
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
	_, err := Read[sample](filepath.Join(t.TempDir(), FileName))
	if !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "has not started") {
		t.Fatalf("err = %v, want ErrNotStarted with a hint", err)
	}
}

func TestRead_TruncatedFileIsUnreadableAtEveryLength(t *testing.T) {
	b, err := json.Marshal(sampleState())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := Decode[sample](b[:n]); err == nil {
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
	if _, err := Read[sample](path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want the size bound", err)
	}
}
