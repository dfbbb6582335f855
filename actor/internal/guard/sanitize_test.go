package guard

import (
	"strings"
	"testing"
)

// TestSanitize_EscapesWhatATerminalWouldObey: a detail carries outside text
// (an apiserver error, a version the desired state or a MachineDeployment
// named) to the beat, the reports ConfigMap, `actor status` and Events; no
// escape sequence or bidi override may ride along.
func TestSanitize_EscapesWhatATerminalWouldObey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"v1.35.6\x1b]0;owned\a", `v1.35.6\x1b]0;owned\a`},
		{"a\u009b2Jb", `a\u009b2Jb`},
		{"pool\u202Eevil", `pool\u202eevil`},
		{"line one\nline two", "line one line two"},
		{"plain text: 409 Conflict", "plain text: 409 Conflict"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The escapes count against the 160 code points.
	if got := Sanitize(strings.Repeat("\x1b", 100)); got != strings.Repeat(`\x1b`, 40)+"…" {
		t.Errorf("Sanitize(100 × ESC) = %q", got)
	}
}
