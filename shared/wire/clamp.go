package wire

import (
	"strings"
	"unicode/utf8"
)

// Clamp returns the longest prefix of s that fits in max UTF-16 code units, cut
// only between code points. The platform validates with zod, whose .max()
// counts UTF-16 units, so a code point above U+FFFF costs two; one that would
// straddle the cap is dropped whole. Clamping by code point alone would let a
// string of emoji at the cap through and 400 the whole beat
// (docs/contract.md#g-15).
//
// Each byte of s that is not part of valid UTF-8 becomes U+FFFD, one unit.
// That is exactly what encoding/json sends for such a byte, so the count here
// is the count the platform sees, and the result is always valid UTF-8, which
// also makes Clamp idempotent. Clamp cuts between code points, not grapheme
// clusters: a base letter may lose its combining marks. max <= 0 gives "".
//
// A result shorter than s is a copy. A substring would share, and so keep
// alive, all of s: callers cache clamped text from objects anyone may make
// huge (an Event's reason), and the cap is what bounds those caches.
func Clamp(s string, max int) string {
	if max <= 0 {
		return ""
	}
	// Valid UTF-8 never spends fewer bytes than UTF-16 units on a code point
	// (1–3 bytes for one unit, 4 bytes for two), so a valid string no longer
	// than max bytes is within max units.
	if len(s) <= max && utf8.ValidString(s) {
		return s
	}
	var fixed []byte // nil until the first invalid byte forces a copy
	units, end := 0, 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		width := 1
		if r > 0xFFFF {
			width = 2
		}
		if units+width > max {
			break
		}
		units += width
		switch {
		case r == utf8.RuneError && size == 1:
			if fixed == nil {
				// Each invalid byte grows to three; a little slack
				// usually saves the regrowth.
				fixed = make([]byte, 0, len(s)+2*utf8.UTFMax)
				fixed = append(fixed, s[:end]...)
			}
			fixed = utf8.AppendRune(fixed, utf8.RuneError)
		case fixed != nil:
			fixed = append(fixed, s[end:end+size]...)
		}
		end += size
	}
	switch {
	case fixed != nil:
		return string(fixed)
	case end < len(s):
		return strings.Clone(s[:end])
	}
	return s
}
