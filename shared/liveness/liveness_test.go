package liveness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck_PassesUntilTheDeadlineAndFailsAtIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alive")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := Touch(path, now.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"just written", now, true},
		{"one nanosecond before the deadline", now.Add(90*time.Second - 1), true},
		{"exactly at the deadline", now.Add(90 * time.Second), false},
		{"long after", now.Add(time.Hour), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(path, tc.at)
			if (err == nil) != tc.ok {
				t.Fatalf("Check at %s: err = %v, want ok=%v", tc.at, err, tc.ok)
			}
		})
	}
}

func TestCheck_MissingOrGarbledFileFails(t *testing.T) {
	dir := t.TempDir()
	if err := Check(filepath.Join(dir, "absent"), time.Now()); err == nil || !strings.Contains(err.Error(), "has not started") {
		t.Fatalf("missing file: err = %v", err)
	}
	garbled := filepath.Join(dir, "garbled")
	if err := os.WriteFile(garbled, []byte("not a number"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(garbled, time.Now()); err == nil {
		t.Fatal("garbled file passed the probe")
	}
}

func TestTouch_LaterDeadlineReplacesEarlier(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alive")
	now := time.Now()
	if err := Touch(path, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if Check(path, now) == nil {
		t.Fatal("an expired deadline passed")
	}
	if err := Touch(path, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, now); err != nil {
		t.Fatalf("a renewed deadline failed: %v", err)
	}
}

func TestCheck_IdlePassesUntilTheNextDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alive")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := NewBeacon(path, Options{Now: func() time.Time { return now }})
	b.Idle()
	if err := Check(path, now.Add(1000*time.Hour)); err != nil {
		t.Fatalf("idle file failed the probe: %v", err)
	}
	b.Mark(time.Minute)
	if err := Check(path, now.Add(time.Minute)); err == nil {
		t.Fatal("a missed deadline after idle passed the probe")
	}
}
