package printable

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString_EscapesWhatATerminalWouldObeyAndKeepsPrintableText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"plain ASCII", "v1.35.6 pool-a: scaled 3 -> 5", "v1.35.6 pool-a: scaled 3 -> 5"},
		{"printable non-ASCII", "Knoten größer – 節點 ✓ 🚀", "Knoten größer – 節點 ✓ 🚀"},
		{"a literal backslash stays", `C:\x1b`, `C:\x1b`},
		{"U+FFFD written as UTF-8 stays", "a\uFFFDb", "a\uFFFDb"},
		{"ESC colour sequence", "v1.35.6\x1b[31mred", `v1.35.6\x1b[31mred`},
		{"OSC title with BEL", "\x1b]0;owned\a", `\x1b]0;owned\a`},
		{"OSC 8 hyperlink with ST", "\x1b]8;;https://evil\x1b\\x\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\x\x1b]8;;\x1b\`},
		{"newline, tab, carriage return", "a\nb\tc\rd", `a\nb\tc\rd`},
		{"NUL and DEL", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"C1 CSI as a rune", "a\u009b31mb", `a\u009b31mb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
		{"C1 CSI as a lone byte", "a\x9b31mb", `a\x9b31mb`},
		{"truncated UTF-8", "ab\xe2\x80", `ab\xe2\x80`},
		{"right-to-left override", "pool\u202Eevil", `pool\u202eevil`},
		{"every bidi embedding and override", "\u202A\u202B\u202C\u202D\u202E", `\u202a\u202b\u202c\u202d\u202e`},
		{"every bidi isolate", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"bidi marks", "\u200E\u200F\u061C", `\u200e\u200f\u061c`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"zero-width space", "a\u200Bb", `a\u200bb`},
		{"byte order mark", "\uFEFFv1", `\ufeffv1`},
		{"tag character above the BMP", "a\U000E0041b", `a\U000e0041b`},
		{"private use", "a\U000F0000b", `a\U000f0000b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// allSafe reports whether every rune of s is Safe, or, with jsonSpace, one
// of the whitespace runes JSON keeps.
func allSafe(s string, jsonText bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !Safe(r) && (!jsonText || !jsonSpace(r)) {
			return false
		}
	}
	return true
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "v1.35.6", "\x1b]0;x\a", "a\u009bb", "\u202Epool", "\xff\xfe", "größer 🚀", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if !allSafe(got, false) {
			t.Fatalf("String(%q) = %q holds a rune that is not printable", s, got)
		}
		if allSafe(s, false) && got != s {
			t.Fatalf("String(%q) = %q changed printable text", s, got)
		}
		if String(got) != got {
			t.Fatalf("String is not idempotent on %q", s)
		}
	})
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "v1.35.6", "\x1b]0;x\a", "a\u009bb", "\u202Epool", "\xff\xfe", "größer 🚀", "\U000E0041"} {
		f.Add(s, "key\u2066")
	}
	f.Fuzz(func(t *testing.T, value, key string) {
		v := map[string]any{key: value, "list": []string{value, key}}
		for _, indent := range []string{"", "\t", "  "} {
			raw, err := json.MarshalIndent(v, "", indent)
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(raw)
			if !allSafe(string(got), true) {
				t.Fatalf("JSON(%q) = %q holds a rune that is not printable", raw, got)
			}
			if allSafe(string(raw), true) && string(got) != string(raw) {
				t.Fatalf("JSON(%q) = %q changed printable text", raw, got)
			}
			var before, after any
			if err := json.Unmarshal(raw, &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &after); err != nil {
				t.Fatalf("JSON(%q) = %q is no longer JSON: %v", raw, got, err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("JSON changed the value: %v, then %v", before, after)
			}
		}
	})
}

func TestString_PrintableTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("pool-a ", 100)
	if allocs := testing.AllocsPerRun(100, func() { _ = String(s) }); allocs != 0 {
		t.Errorf("String of printable text allocates %.0f times, want 0", allocs)
	}
	b := []byte(`{"a":"pool-a"}`)
	if allocs := testing.AllocsPerRun(100, func() { _ = JSON(b) }); allocs != 0 {
		t.Errorf("JSON of printable text allocates %.0f times, want 0", allocs)
	}
}
