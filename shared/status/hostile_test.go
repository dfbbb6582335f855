package status

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// hostile is what a platform document or a MachineDeployment field could
// carry into a report or an error: an OSC title change, a C1 CSI that
// clears the screen, a right-to-left override, a carriage return that
// overwrites the line and a newline that forges one.
const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\n\tlast error: none"

// escapedHostile is hostile as `status` prints it.
const escapedHostile = `v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\n\tlast error: none`

func hostileState() sample {
	return sample{Version: hostile, Started: now, LastError: hostile}
}

// assertOnlyPrintableLines fails on any rune in out that is neither
// printable nor the newline ending a line, and on any line that does not
// start with one of the keys the renderer writes.
func assertOnlyPrintableLines(t *testing.T, out string, lines int) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Fatalf("output holds %U:\n%q", r, out)
		}
	}
	if got := strings.Count(out, "\n"); got != lines {
		t.Errorf("output has %d lines, want %d (a newline in a value forged one):\n%s", got, lines, out)
	}
	if n := strings.Count(out, escapedHostile); n == 0 {
		t.Errorf("output does not show the hostile text escaped:\n%s", out)
	}
}

func TestTable_ShowsHostileTextEscaped(t *testing.T) {
	out := rendered(t, hostileState())
	assertOnlyPrintableLines(t, out, 4)
	if n := strings.Count(out, escapedHostile); n != 3 {
		t.Errorf("the escaped text appears %d times, want 3 (version, last error, the row):\n%s", n, out)
	}
}

// TestPrint_JSONShowsNoControlRuneAndDecodesToTheSameState: --json is for
// a program, so the state must decode unchanged, yet it is printed to the
// same terminal.
func TestPrint_JSONShowsNoControlRuneAndDecodesToTheSameState(t *testing.T) {
	o := hostileState()
	var b strings.Builder
	if err := Print(o, []string{"--json"}, &b); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if r != '\n' && r != ' ' && !unicode.IsPrint(r) {
			t.Fatalf("--json output holds %U:\n%q", r, b.String())
		}
	}
	var back sample
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, o) {
		t.Errorf("--json decodes to\n%+v\nwant\n%+v", back, o)
	}
}
