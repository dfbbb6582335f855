package wire_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

func TestClamp(t *testing.T) {
	const grin = "\U0001F600" // 4 bytes, 2 UTF-16 units
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"empty stays empty", "", 5, ""},
		{"ascii under the cap", "abc", 5, "abc"},
		{"ascii exactly at the cap", "abcde", 5, "abcde"},
		{"ascii one past the cap", "abcdef", 5, "abcde"},
		{"zero cap", "abc", 0, ""},
		{"negative cap", "abc", -1, ""},
		{"two-byte runes count one unit each", "ééé", 2, "éé"},
		{"three-byte runes over the byte length still fit", "€€€", 3, "€€€"},
		{"three-byte runes one past the cap", "€€€€", 3, "€€€"},
		{"non-BMP ending exactly at the cap", "a" + grin, 3, "a" + grin},
		{"non-BMP straddling the cap is dropped whole", "ab" + grin, 3, "ab"},
		{"nothing after a dropped non-BMP rune", "ab" + grin + "c", 3, "ab"},
		{"lone non-BMP rune under a cap of one", grin, 1, ""},
		{"lone non-BMP rune under a cap of two", grin, 2, grin},
		{"non-BMP runes on the byte fast path", grin + grin, 8, grin + grin},
		{"non-BMP runes past the unit cap", grin + grin + grin, 5, grin + grin},
		{"combining mark kept when it fits", "e\u0301", 2, "e\u0301"},
		{"combining mark cut from its base letter", "e\u0301x", 1, "e"},
		{"invalid byte becomes U+FFFD", "a\xffb", 5, "a\uFFFDb"},
		{"invalid byte fixed even within the byte cap", "\xff", 1, "\uFFFD"},
		{"truncated sequence costs one unit per byte", "a\xe2\x82", 10, "a\uFFFD\uFFFD"},
		{"UTF-8 encoded surrogate is invalid", "\xed\xa0\x80", 10, "\uFFFD\uFFFD\uFFFD"},
		{"replacements count against the cap", "\xff\xff\xff", 2, "\uFFFD\uFFFD"},
		{"invalid byte past the cap is never seen", "abc\xff", 3, "abc"},
		{"literal U+FFFD is valid and kept", "\uFFFDz", 2, "\uFFFDz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wire.Clamp(tt.in, tt.max)
			if got != tt.want {
				t.Fatalf("Clamp(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result %q is not valid UTF-8", got)
			}
			if again := wire.Clamp(got, tt.max); again != got {
				t.Errorf("second Clamp = %q, want %q", again, got)
			}
		})
	}
}

// The fast path returns s when len(s) <= max bytes. That is sound only if no
// valid code point spends more UTF-16 units than UTF-8 bytes; check them all.
func TestClamp_FastPathHoldsForEveryCodePoint(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue // surrogates cannot appear in valid UTF-8
		}
		if units, bytes := utf16.RuneLen(r), utf8.RuneLen(r); units > bytes {
			t.Fatalf("U+%04X: %d UTF-16 units > %d UTF-8 bytes", r, units, bytes)
		}
	}
}

func TestClamp_ValidInputWithinItsCapNeverAllocates(t *testing.T) {
	long := strings.Repeat("x€\U0001F600", 200) // 800 units in 1,600 bytes
	allocs := testing.AllocsPerRun(100, func() {
		_ = wire.Clamp(long, 800)
		_ = wire.Clamp("short", 253)
	})
	if allocs != 0 {
		t.Errorf("Clamp of valid UTF-8 within its cap allocated %.0f times per run, want 0", allocs)
	}
}

// What a cache keeps of a clamped string must be the clamped string alone:
// a cut that shared the input's memory would keep all of it alive.
func TestClamp_ACutKeepsNoneOfItsInputAlive(t *testing.T) {
	for _, huge := range []string{strings.Repeat("é", 1<<20), strings.Repeat("x\U0001F600", 1<<18), "a\xff" + strings.Repeat("b", 1<<20)} {
		got := wire.Clamp(huge, 63)
		if testkit.Pins(got, huge) {
			t.Errorf("Clamp(%q…, 63) = %q shares the input's memory", huge[:8], got)
		}
	}
	fits := strings.Repeat("é", 63)
	if got := wire.Clamp(fits, 63); got != fits || !testkit.Pins(got, fits) {
		t.Errorf("Clamp copied a string within its cap")
	}
}

// Clamp replaces invalid bytes exactly as encoding/json would, so a string
// under its cap decodes on the platform to the same text, clamped or not.
func TestClamp_InvalidBytesMatchEncodingJSON(t *testing.T) {
	for _, raw := range []string{"a\xffb", "\xe2\x82", "\xed\xa0\x80x", "\xf0\x9f\x98", "ok"} {
		if got, want := decoded(t, wire.Clamp(raw, 100)), decoded(t, raw); got != want {
			t.Errorf("%q: clamped arrives as %q, raw as %q", raw, got, want)
		}
	}
}

// decoded is s as a JSON reader sees it after encoding/json sent it.
func decoded(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
