package backoff_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"kubehz.dev/agent/shared/backoff"
)

func fixed(j float64) func() float64 { return func() float64 { return j } }

// waits draws n waits from a fresh Backoff.
func waits(b *backoff.Backoff, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = b.Next()
	}
	return out
}

func TestBackoff_Sequence(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name      string
		base, max time.Duration
		jitter    float64
		want      []time.Duration
	}{
		{"full jitter doubles up to max", s, 30 * s, 1, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}},
		{"zero jitter is floored at base", s, 30 * s, 0, []time.Duration{s, s, s, s}},
		{"half jitter floors the early waits", s, 30 * s, 0.5, []time.Duration{s, s, 2 * s, 4 * s, 8 * s, 15 * s, 15 * s}},
		{"defaults are 1 s and 5 min", 0, -1, 1, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 300 * s, 300 * s}},
		{"max below base is raised to base", 10 * s, 5 * s, 1, []time.Duration{10 * s, 10 * s, 10 * s}},
		{"max equal to base stays flat", 2 * s, 2 * s, 0.3, []time.Duration{2 * s, 2 * s}},
		{"NaN jitter is floored at base", s, 30 * s, math.NaN(), []time.Duration{s, s, s}},
		{"jitter above one is held at max", s, 30 * s, 7, []time.Duration{7 * s, 14 * s, 28 * s, 30 * s}},
		{"negative jitter is floored at base", s, 30 * s, -1, []time.Duration{s, s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := backoff.New(backoff.Options{Base: tt.base, Max: tt.max, Jitter: fixed(tt.jitter)})
			if got := waits(b, len(tt.want)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("waits = %v, want %v", got, tt.want)
			}
			if got := b.Attempt(); got != len(tt.want) {
				t.Errorf("Attempt() = %d, want %d", got, len(tt.want))
			}
		})
	}
}

func TestBackoff_ResetReturnsToBase(t *testing.T) {
	b := backoff.New(backoff.Options{Base: time.Second, Max: 30 * time.Second, Jitter: fixed(1)})
	waits(b, 5)
	b.Reset()
	if got := b.Attempt(); got != 0 {
		t.Errorf("Attempt() after Reset = %d, want 0", got)
	}
	if got := waits(b, 2); !reflect.DeepEqual(got, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("waits after Reset = %v, want [1s 2s]", got)
	}
}

// Far past 63 doublings, base·2^k must neither wrap negative nor escape max,
// even with a max near the largest Duration.
func TestBackoff_NoOverflowAfterManyAttempts(t *testing.T) {
	tests := []struct {
		name      string
		base, max time.Duration
	}{
		{"defaults", 0, 0},
		{"nanosecond base", 1, 5 * time.Minute},
		{"largest max", time.Second, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := backoff.New(backoff.Options{Base: tt.base, Max: tt.max, Jitter: fixed(1)})
			prev := time.Duration(0)
			for i := range 100 {
				w := b.Next()
				if w < prev || w <= 0 {
					t.Fatalf("attempt %d: wait %v after %v", i, w, prev)
				}
				prev = w
			}
			if b.Attempt() != 100 {
				t.Errorf("Attempt() = %d, want 100", b.Attempt())
			}
			wantMax := tt.max
			if wantMax == 0 {
				wantMax = backoff.DefaultMax
			}
			if prev != wantMax {
				t.Errorf("wait after 100 attempts = %v, want max %v", prev, wantMax)
			}
		})
	}
}

func TestBackoff_DefaultJitterStaysInBounds(t *testing.T) {
	b := backoff.New(backoff.Options{Base: time.Second, Max: 30 * time.Second})
	for i := range 200 {
		if w := b.Next(); w < time.Second || w > 30*time.Second {
			t.Fatalf("attempt %d: wait %v outside [1s, 30s]", i, w)
		}
	}
}
