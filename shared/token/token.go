// Package token resolves the agent's bearer token and keeps it out of every
// log line, error and panic.
package token

import (
	"fmt"
	"log/slog"
	"regexp"
)

const redacted = "khz_agt_***redacted***"

// Token is the agent token. Every way of printing it redacts; only Reveal
// gives the value, and only the platform client calls it.
type Token string

// Reveal returns the raw token for the Authorization header.
func (t Token) Reveal() string { return string(t) }

// String redacts, so %s, %v and %q never leak the value.
func (t Token) String() string {
	if t == "" {
		return "<unset>"
	}
	return redacted
}

// GoString redacts %#v.
func (t Token) GoString() string { return t.String() }

// Format redacts every verb, including %x and %d.
func (t Token) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(t.String())) }

// LogValue redacts the token in slog output.
func (t Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// MarshalText redacts the token in JSON and any other text encoding.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// pasted is the prefix and every non-space character after it, so a token,
// a truncated one or one glued to other text is masked whole.
var pasted = regexp.MustCompile(regexp.QuoteMeta(Prefix) + `\S*`)

// Redact masks every run in s that starts with the token prefix. Use it on
// any text about to be logged or quoted that might hold a token by mistake,
// such as a token pasted into the wrong setting.
func Redact(s string) string { return pasted.ReplaceAllLiteralString(s, redacted) }
