package printable

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON returns the JSON text b with every rune that is not Safe written as a
// \u escape, so it decodes to exactly the same value yet shows a terminal
// nothing to obey. Encoders escape the C0 controls inside strings but send
// the C1 controls, DEL and the bidirectional controls raw. Space, tab and
// newline are kept: raw, they can only be whitespace between tokens, since a
// string must escape them, and none of them can overwrite what a terminal
// shows. A carriage return, which can, is escaped even there; encoders never
// write one raw. A byte that is not UTF-8 becomes \ufffd, the rune a decoder
// reads it as. Text that needs no escape comes back as it is, without a copy.
func JSON(b []byte) []byte {
	i := firstRejected(b, utf8.DecodeRune, keptInJSON)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case keptInJSON(r):
			out = append(out, b[i:i+size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}

func jsonSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

// keptInJSON is Safe plus the whitespace JSON allows between tokens.
func keptInJSON(r rune) bool { return Safe(r) || jsonSpace(r) }
