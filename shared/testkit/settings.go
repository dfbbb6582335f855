package testkit

import (
	"fmt"
	"strings"
	"testing"
)

// Setting is one case of a settings test: the base environment with one
// variable set to Val (or removed), then either the value the loaded field
// holds or the hint the refusal gives.
type Setting struct {
	Name    string
	Val     string
	Want    any    // the field's value when accepted, compared as printed
	Bad     string // a substring of the variable's reason when refused
	Secret  bool   // the value must not appear in the error
	Omitted bool   // unset instead of set to Val
}

// Settings loads a binary's settings from an environment. A refusal is
// read as the operator reads it: Header, then one "  VAR: reason" line per
// refused variable.
type Settings[T any] struct {
	Base   func() map[string]string // a fresh map on every call
	Load   func(env map[string]string) (T, error)
	Header string // the first line of every refusal
}

// Check runs each case against envVar, reading the result through field.
func (s Settings[T]) Check(t *testing.T, envVar string, field func(T) any, cases []Setting) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			env := s.Base()
			env[envVar] = tc.Val
			if tc.Omitted {
				delete(env, envVar)
			}
			got, err := s.Load(env)
			if tc.Bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if v := field(got); fmt.Sprint(v) != fmt.Sprint(tc.Want) {
					t.Fatalf("%s = %v, want %v", envVar, v, tc.Want)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s=%q accepted, want it refused with %q", envVar, tc.Val, tc.Bad)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 2 || lines[0] != s.Header || !strings.HasPrefix(lines[1], "  "+envVar+": ") {
				t.Fatalf("err = %v, want one problem, with %s", err, envVar)
			}
			if !strings.Contains(lines[1], tc.Bad) {
				t.Fatalf("reason %q lacks %q", lines[1], tc.Bad)
			}
			if tc.Secret && strings.Contains(err.Error(), strings.TrimSpace(tc.Val)) {
				t.Fatalf("error %q echoes the value", err)
			}
		})
	}
}
