package memlimit

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
)

func TestApply_NinetyPercentOfContainerLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	// Every value is well above what the test binary uses, so no case makes
	// the GC work hard while it holds.
	tests := []struct {
		name     string
		env      map[string]string
		want     int64 // -1: the limit is left alone
		wantWarn bool
	}{
		{"1 GB limit", map[string]string{"KUBEHZ_MEMORY_LIMIT": "1000000000"}, 900_000_000, false},
		{"256 MiB limit rounds down", map[string]string{"KUBEHZ_MEMORY_LIMIT": "268435456"}, 241_591_905, false},
		{"surrounding space", map[string]string{"KUBEHZ_MEMORY_LIMIT": " 500000000\n"}, 450_000_000, false},
		{"GOMEMLIMIT set by the user wins", map[string]string{"GOMEMLIMIT": "700MiB", "KUBEHZ_MEMORY_LIMIT": "1000000000"}, -1, false},
		{"unset", nil, -1, false},
		{"quantity suffix", map[string]string{"KUBEHZ_MEMORY_LIMIT": "512Mi"}, -1, true},
		{"exponent", map[string]string{"KUBEHZ_MEMORY_LIMIT": "1e9"}, -1, true},
		{"fraction", map[string]string{"KUBEHZ_MEMORY_LIMIT": "1.5"}, -1, true},
		{"hex", map[string]string{"KUBEHZ_MEMORY_LIMIT": "0x40000000"}, -1, true},
		{"word", map[string]string{"KUBEHZ_MEMORY_LIMIT": "lots"}, -1, true},
		{"zero", map[string]string{"KUBEHZ_MEMORY_LIMIT": "0"}, -1, true},
		{"negative", map[string]string{"KUBEHZ_MEMORY_LIMIT": "-1000000000"}, -1, true},
		{"overflow", map[string]string{"KUBEHZ_MEMORY_LIMIT": "99999999999999999999"}, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A sentinel no case computes, so "left alone" is visible.
			const sentinel = 3 << 30
			debug.SetMemoryLimit(sentinel)
			var logs bytes.Buffer
			Apply(func(k string) string { return tt.env[k] }, slog.New(slog.NewJSONHandler(&logs, nil)))
			got := debug.SetMemoryLimit(prev)

			want := tt.want
			if want == -1 {
				want = sentinel
			}
			if got != want {
				t.Errorf("memory limit = %d, want %d", got, want)
			}
			if warned := strings.Contains(logs.String(), `"level":"WARN"`); warned != tt.wantWarn {
				t.Errorf("warned = %v, want %v; logs: %s", warned, tt.wantWarn, logs.String())
			}
		})
	}
}

func TestApply_GCTargetUnlessGOGCIsSet(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	log := slog.New(slog.DiscardHandler)

	Apply(func(string) string { return "" }, log)
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("GC percent with GOGC unset = %d, want 50", got)
	}
	Apply(func(k string) string {
		if k == "GOGC" {
			return "200" // the runtime read it at start; Apply must leave it
		}
		return ""
	}, log)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent with GOGC set = %d, want it left at 100", got)
	}
}
