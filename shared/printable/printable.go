// Package printable makes text from outside the agent (the platform's
// documents, cluster objects, error messages) safe to show a person. A
// terminal obeys escape sequences and bidirectional controls reorder what a
// reader sees, so a hostile version string or MachineDeployment field could
// otherwise rewrite `actor status`, `kubectl describe` or a log line, or
// disguise itself. Every rune that unicode.IsPrint rejects is replaced by a
// visible escape; printable text passes through unchanged.
package printable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe reports whether r may reach a terminal as it is. unicode.IsPrint
// admits letters, marks, numbers, punctuation, symbols and the ASCII space;
// it rejects the C0 and C1 controls (ESC, U+009B CSI), DEL, the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069) and marks (U+200E, U+200F, U+061C), the line and
// paragraph separators, and every other format, private-use or unassigned
// code point.
func Safe(r rune) bool { return unicode.IsPrint(r) }

// String returns s with every rune that is not Safe written as Go writes it
// in a quoted string (`\x1b`, `\n`, `\u009b`, `\u202e`) and every byte that
// is not UTF-8 as `\xNN`. The result is valid UTF-8 and all of it is Safe; a
// string that already is comes back as it is, without a copy.
func String(s string) string {
	i := firstRejected(s, utf8.DecodeRuneInString, Safe)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Safe(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e': drop the quotes
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// firstRejected is the index of the first rune of s that keep rejects, or
// of its first byte that is not UTF-8, or -1. ASCII is judged byte by byte,
// without decoding; decode is utf8's decoder for s's form.
func firstRejected[T string | []byte](s T, decode func(T) (rune, int), keep func(rune) bool) int {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !keep(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, size := decode(s[i:])
		if (r == utf8.RuneError && size == 1) || !keep(r) {
			return i
		}
		i += size
	}
	return -1
}
