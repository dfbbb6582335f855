package token

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate_AcceptsOnlyPrefixAnd64LowercaseHex(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{name: "valid", in: "khz_agt_" + hex64, ok: true},
		{name: "empty", in: ""},
		{name: "short", in: "khz_agt_short"},
		{name: "claim code prefix", in: "khzc_" + hex64},
		{name: "65 hex digits", in: "khz_agt_" + hex64 + "a"},
		{name: "63 hex digits", in: "khz_agt_" + hex64[1:]},
		{name: "uppercase hex", in: "khz_agt_" + strings.ToUpper(hex64)},
		{name: "non-hex letter", in: "khz_agt_" + hex64[1:] + "g"},
		{name: "surrounding space", in: " khz_agt_" + hex64},
		{name: "wrong prefix", in: "khz_agX_" + hex64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.in)
			if tc.ok {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Validate = %v, want ErrMalformed", err)
			}
			if tc.in != "" && strings.Contains(err.Error(), tc.in) {
				t.Fatalf("error %q echoes the input", err)
			}
		})
	}
}

func TestToken_PrintsRedacted(t *testing.T) {
	cases := []struct {
		name string
		tok  Token
		want string
	}{
		{name: "set", tok: Token(valid(1)), want: "khz_agt_***redacted***"},
		{name: "unset", tok: "", want: "<unset>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tok.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
