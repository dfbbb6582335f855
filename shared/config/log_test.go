package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"unicode"
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
