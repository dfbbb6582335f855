package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode"

	"k8s.io/klog/v2"
)

// TestNewLogger_LogsOutsideTextWithoutARuneATerminalWouldObey: slog escapes the
// C0 controls, but a C1 CSI or a bidi override in a logged platform error
// or version reached `kubectl logs` raw. Each line must still decode to the
// very text that was logged.
func TestNewLogger_LogsOutsideTextWithoutARuneATerminalWouldObey(t *testing.T) {
	const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\u2066\x7f"
	var b bytes.Buffer
	log := NewLogger(&b, slog.LevelInfo)
	log.Info("Refused the target "+hostile, "version", hostile, "err", errors.New(hostile),
		slog.Group("pool", "name", hostile))
	for _, r := range b.String() {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Fatalf("log line holds %U:\n%q", r, b.String())
		}
	}
	var line struct {
		Msg, Version, Err string
		Pool              struct{ Name string }
	}
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line.Msg != "Refused the target "+hostile || line.Version != hostile || line.Err != hostile || line.Pool.Name != hostile {
		t.Errorf("the line decodes to %+v, not the text logged", line)
	}
}

// client-go logs through klog, a process global its goroutines read without
// a lock, and an informer's list can outlive the run that started it: the
// next run's NewLogger must neither race with it (-race fails this test
// when klog's logger is set again) nor leave klog writing to the old stream.
func TestNewLogger_KlogFollowsTheNewestLoggerWithoutARace(t *testing.T) {
	var first, second bytes.Buffer
	NewLogger(&first, slog.LevelInfo)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			klog.Background().WithValues("pool", "a").Info("from a list")
		}
	}()
	NewLogger(&second, slog.LevelInfo)
	<-done
	klog.Background().WithValues("pool", "b").Info("after the second run began")
	if !strings.Contains(second.String(), `"msg":"after the second run began","pool":"b"`) {
		t.Errorf("the second logger did not get klog's line:\n%s", second.String())
	}
	if strings.Contains(first.String(), "after the second run began") {
		t.Error("klog still writes to the first logger")
	}
}
