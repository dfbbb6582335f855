package guard

import (
	"strings"
	"testing"
)

func TestGuard_AutoscalerKeyFindsEachKey(t *testing.T) {
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

func TestGuard_ErrorTextIsOneLineAndCutAt160CodePoints(t *testing.T) {
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
