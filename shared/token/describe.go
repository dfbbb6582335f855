package token

import (
	"fmt"
	"log/slog"
)

// String says where the token comes from, never what it is. It reads only
// what NewSource set, so printing never waits behind a resolution.
func (s *Source) String() string {
	if s == nil {
		return "token.Source(nil)"
	}
	return fmt.Sprintf("token.Source{env: %s, file: %q, secretFallback: %t}",
		s.envToken(), Redact(s.file), s.secret != nil)
}

// GoString keeps %#v as redacted as %v.
func (s *Source) GoString() string { return s.String() }

// LogValue describes the Source in slog output, token redacted.
func (s *Source) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.Any("env", s.envToken()),
		slog.String("file", Redact(s.file)),
		slog.Bool("secretFallback", s.secret != nil),
	)
}

func (s *Source) envToken() Token {
	if s.env == nil {
		return ""
	}
	return *s.env
}
