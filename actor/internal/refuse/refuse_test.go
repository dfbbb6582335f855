package refuse

import (
	"strings"
	"testing"
)

func TestRefuse_AutoscalerKeyFindsEachKey(t *testing.T) {
	for _, key := range autoscalerAnnotations {
		if got := AutoscalerKey(map[string]string{"unrelated": "x", key: ""}); got != key {
			t.Errorf("AutoscalerKey with %s = %q", key, got)
		}
	}
	if got := AutoscalerKey(map[string]string{"cluster.x-k8s.io/cluster-name": "c"}); got != "" {
		t.Errorf("AutoscalerKey without autoscaler keys = %q", got)
	}
	if got := AutoscalerKey(nil); got != "" {
		t.Errorf("AutoscalerKey(nil) = %q", got)
	}
}

func TestRefuse_ErrorTextIsOneLineAndCutAt160CodePoints(t *testing.T) {
	if got := Sanitize("a\nb\r\nc"); got != "a b  c" {
		t.Errorf("Sanitize newlines = %q", got)
	}
	exact := strings.Repeat("é", 160)
	if got := Sanitize(exact); got != exact {
		t.Error("Sanitize cut a 160 code point text")
	}
	long := strings.Repeat("é", 161)
	if got, want := Sanitize(long), exact+"…"; got != want {
		t.Errorf("Sanitize(161 × é) = %q, want %q", got, want)
	}
}

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
