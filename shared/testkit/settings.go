package testkit

import (
	"fmt"
	"log/slog"
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

// MinimalEnv is the least environment either binary starts from: a cluster
// ID and the platform's URL.
func MinimalEnv() map[string]string {
	return map[string]string{"CLUSTER_ID": "c1", "KUBEHZ_API_URL": "https://api.kubehz.dev"}
}

// Env is MinimalEnv with overrides set.
func Env(overrides map[string]string) map[string]string {
	env := MinimalEnv()
	for k, v := range overrides {
		env[k] = v
	}
	return env
}

// LogsRedacted logs settings as the start-up line does, as JSON, and fails
// unless that line holds every part of want, or if the line or any careless
// printing of settings (%v, %+v, %#v) shows secret.
func LogsRedacted(t *testing.T, settings any, secret string, want ...string) {
	t.Helper()
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("Config", "config", settings)
	for _, part := range want {
		if !strings.Contains(b.String(), part) {
			t.Fatalf("log line lacks %s: %s", part, b.String())
		}
	}
	if printed := b.String() + fmt.Sprintf("%v %+v %#v", settings, settings, settings); strings.Contains(printed, secret) {
		t.Fatalf("the secret leaked: %s", printed)
	}
}
