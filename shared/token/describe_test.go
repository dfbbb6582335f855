package token

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestRedact_MasksEveryPastedToken(t *testing.T) {
	tok := valid(42)
	cases := []struct {
		name string
		in   string
		want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "no token", in: "kube-system", want: "kube-system"},
		{name: "token alone", in: tok, want: redacted},
		{name: "glued to text", in: "id-" + tok + "-x", want: "id-" + redacted},
		{name: "inside a URL", in: "https://h/p/" + tok + "?q", want: "https://h/p/" + redacted},
		{name: "malformed token", in: "khz_agt_ABC", want: redacted},
		{name: "bare prefix", in: "khz_agt_", want: redacted},
		{name: "two tokens", in: tok + " and " + valid(7), want: redacted + " and " + redacted},
		{name: "ends at whitespace", in: "a " + tok + "\tb", want: "a " + redacted + "\tb"},
		{name: "claim code untouched", in: "khzc_abc", want: "khzc_abc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.in); got != tc.want {
				t.Fatalf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSource_PrintsNoToken(t *testing.T) {
	tok := valid(5)
	secret := (&fakeSecret{val: tok}).read
	fromFile := func(t *testing.T) *Source {
		path := tokenPath(t)
		writeAt(t, path, tok, epoch)
		return NewSource(path, Options{})
	}
	cases := []struct {
		name   string
		source func(t *testing.T) *Source
		want   string // what %v of the pointer says
	}{
		{
			name:   "from the environment",
			source: func(*testing.T) *Source { return NewSource("/tok", Options{FromEnv: Token(tok)}) },
			want:   `token.Source{env: khz_agt_***redacted***, file: "/tok", secretFallback: false}`,
		},
		{name: "cached from the file", source: fromFile},
		{
			name:   "cached from the Secret",
			source: func(t *testing.T) *Source { return NewSource(tokenPath(t), Options{Secret: secret}) },
		},
	}
	hex := strings.TrimPrefix(tok, Prefix)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.source(t)
			if got, err := s.Token(context.Background()); err != nil || got.Reveal() != tok {
				t.Fatalf("Token = %v, %v; the fixture must hold the token", got, err)
			}
			if tc.want != "" {
				if got := fmt.Sprint(s); got != tc.want {
					t.Errorf("%%v = %s, want %s", got, tc.want)
				}
			}
			// A Source value cannot be passed to fmt without copying its
			// atomic, so it goes in as the reflect.Value fmt unwraps.
			value := reflect.ValueOf(s).Elem()
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
				for name, arg := range map[string]any{"*Source": s, "Source": value} {
					if got := fmt.Sprintf(verb, arg); strings.Contains(got, hex) {
						t.Errorf("%s of %s shows the token: %s", verb, name, got)
					}
				}
			}
			var logs strings.Builder
			slog.New(slog.NewJSONHandler(&logs, nil)).Info("Tokens", "source", s)
			slog.New(slog.NewTextHandler(&logs, nil)).Info("Tokens", "source", s)
			if strings.Contains(logs.String(), hex) || !strings.Contains(logs.String(), "secretFallback") {
				t.Errorf("log lines show the token or not the Source: %s", logs.String())
			}
		})
	}
}

// The path is not the token's field, so only the forms that go through the
// Source's own methods mask it; configuration refuses such a path anyway.
func TestSource_MasksATokenPastedAsThePath(t *testing.T) {
	s := NewSource("/run/"+valid(5), Options{})
	want := `token.Source{env: <unset>, file: "/run/khz_agt_***redacted***", secretFallback: false}`
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if got := fmt.Sprintf(verb, s); got != want {
			t.Errorf("%s = %s, want %s", verb, got, want)
		}
	}
	var logs strings.Builder
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("Tokens", "source", s)
	if want := `"source":{"env":"<unset>","file":"/run/khz_agt_***redacted***","secretFallback":false}`; !strings.Contains(logs.String(), want) {
		t.Errorf("log line %s lacks %s", logs.String(), want)
	}
}

func TestSource_PrintsNilAndZero(t *testing.T) {
	var nilSource *Source
	if got := fmt.Sprint(nilSource); got != "token.Source(nil)" {
		t.Errorf("nil prints %q", got)
	}
	if got := fmt.Sprint(&Source{}); got != `token.Source{env: <unset>, file: "", secretFallback: false}` {
		t.Errorf("zero prints %q", got)
	}
}
