package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/testkit"
)

// check is one case of runChecks: testkit.MinimalEnv() with one variable set.
type check = testkit.Setting

func runChecks(t *testing.T, envVar string, field func(Common) any, cases []check) {
	t.Helper()
	testkit.Settings[Common]{Base: testkit.MinimalEnv, Load: load, Header: "invalid configuration:"}.Check(t, envVar, field, cases)
}

func TestParseCommon_ClusterID(t *testing.T) {
	long := strings.Repeat("a", 253)
	cases := []check{
		{Name: "single char", Val: "a", Want: "a"},
		{Name: "mixed", Val: "K8S_lab.example-1.com", Want: "K8S_lab.example-1.com"},
		{Name: "trimmed", Val: " c-2\t", Want: "c-2"},
		{Name: "253 chars", Val: long, Want: long},
		{Name: "254 chars", Val: long + "a", Bad: "1-253"},
	}
	for _, v := range []string{"a/b", "a b", "a?b", "../up", "#frag", "-lead", "trail-", ".dot", "a%2Fb"} {
		cases = append(cases, check{Name: "rejects " + v, Val: v, Bad: "letter or digit"})
	}
	runChecks(t, "CLUSTER_ID", func(c Common) any { return c.ClusterID }, cases)
}

func TestParseCommon_APIURL(t *testing.T) {
	runChecks(t, "KUBEHZ_API_URL", func(c Common) any { return c.APIURL }, []check{
		{Name: "https", Val: "https://api.kubehz.dev", Want: "https://api.kubehz.dev"},
		{Name: "trailing slash trimmed", Val: " https://api.kubehz.dev/ ", Want: "https://api.kubehz.dev"},
		{Name: "path prefix kept", Val: "https://x.dev/kubehz///", Want: "https://x.dev/kubehz"},
		{Name: "http localhost", Val: "http://localhost:3000", Want: "http://localhost:3000"},
		{Name: "http 127.0.0.1", Val: "http://127.0.0.1:8080/", Want: "http://127.0.0.1:8080"},
		{Name: "http ::1", Val: "http://[::1]:8080", Want: "http://[::1]:8080"},
		{Name: "http elsewhere", Val: "http://api.kubehz.dev", Bad: "https"},
		{Name: "http localhost lookalike", Val: "http://localhost.evil.dev", Bad: "https"},
		{Name: "other scheme", Val: "ftp://api.kubehz.dev", Bad: "https"},
		{Name: "no scheme", Val: "api.kubehz.dev", Bad: "host"},
		{Name: "no host", Val: "https:///path", Bad: "host"},
		{Name: "unparsable", Val: "https://a b.dev:x", Bad: "not a URL"},
		{Name: "credentials", Val: "https://u:hunter2@api.kubehz.dev", Bad: "credentials"},
		{Name: "query", Val: "https://api.kubehz.dev/?x=1", Bad: "query"},
	})
}

func TestParseCommon_Token(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	runChecks(t, "KUBEHZ_AGENT_TOKEN", func(c Common) any { return c.AgentToken.Reveal() }, []check{
		{Name: "from env", Val: goodToken, Want: goodToken},
		{Name: "unset", Omitted: true, Want: ""},
		{Name: "short", Val: "khz_agt_short", Bad: "malformed", Secret: true},
		{Name: "claim code", Val: "khzc_" + hex64, Bad: "claim code", Secret: true},
		{Name: "65 hex digits", Val: "khz_agt_" + hex64 + "0", Bad: "72 characters", Secret: true},
		{Name: "uppercase hex", Val: "khz_agt_" + strings.ToUpper(hex64), Bad: "lowercase hex", Secret: true},
	})
}

func TestParseCommon_SecretLocation(t *testing.T) {
	runChecks(t, "KUBEHZ_NAMESPACE", func(c Common) any { return c.Namespace }, []check{
		{Name: "default", Omitted: true, Want: "kubehz-system"},
		{Name: "override", Val: "ops-1", Want: "ops-1"},
		{Name: "uppercase", Val: "Kube-System", Bad: "DNS-1123 label"},
		{Name: "underscore", Val: "kube_system", Bad: "DNS-1123 label"},
		{Name: "leading dash", Val: "-x", Bad: "DNS-1123 label"},
		{Name: "slash", Val: "a/b", Bad: "DNS-1123 label"},
		{Name: "dot", Val: "a.b", Bad: "DNS-1123 label"},
		{Name: "64 chars", Val: strings.Repeat("a", 64), Bad: "DNS-1123 label"},
	})
	runChecks(t, "KUBEHZ_SECRET_NAME", func(c Common) any { return c.SecretName }, []check{
		{Name: "default", Omitted: true, Want: "kubehz-agent"},
		{Name: "dotted", Val: "agent.v2", Want: "agent.v2"},
		{Name: "uppercase", Val: "Agent", Bad: "DNS-1123 subdomain"},
		{Name: "slash", Val: "a/b", Bad: "DNS-1123 subdomain"},
	})
}

// A level the agent does not know is refused like every other bad setting
// (exit 2, naming the allowed values): read as info, `verbose` or `trace`
// would hide the very lines the user asked for.
func TestParseCommon_LogLevelRefusesAnUnknownLevel(t *testing.T) {
	cases := []check{{Name: "unset", Omitted: true, Want: slog.LevelInfo}, {Name: "blank", Val: "  ", Want: slog.LevelInfo}}
	for v, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "DEBUG": slog.LevelDebug, "Debug": slog.LevelDebug, "warn": slog.LevelWarn,
		"WARN": slog.LevelWarn, "error": slog.LevelError, "ERROR": slog.LevelError, "info": slog.LevelInfo,
		"INFO": slog.LevelInfo,
	} {
		cases = append(cases, check{Name: v, Val: v, Want: want})
	}
	for _, v := range []string{"verbose", "trace", "warning", "0", "-4", "info+"} {
		cases = append(cases, check{Name: v, Val: v, Bad: `"` + v + `" is not a log level (use debug, info, warn or error)`})
	}
	runChecks(t, "KUBEHZ_LOG_LEVEL", func(c Common) any { return c.LogLevel }, cases)
}

// Duration and Boolean serve the binaries' own settings, not Common's, so
// they are checked here directly: each keeps a good value and notes one
// problem, naming the variable, for a bad one.
func TestProblems_DurationAndBoolean(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
		bad  string
	}{
		{v: "90s", want: 90 * time.Second},
		{v: "1ns", want: time.Nanosecond},
		{v: "0s", bad: "greater than 0"},
		{v: "-5s", bad: "greater than 0"},
		{v: "60", bad: "Go duration"},
	} {
		var p Problems
		got := p.Duration("KUBEHZ_X", tc.v)
		if tc.bad == "" && (got != tc.want || len(p) != 0) {
			t.Errorf("Duration(%q) = %s, problems %v; want %s", tc.v, got, p, tc.want)
		}
		if tc.bad != "" && (got != 0 || len(p) != 1 || p[0].Var != "KUBEHZ_X" || !strings.Contains(p[0].Reason, tc.bad)) {
			t.Errorf("Duration(%q) = %s, problems %v; want 0 and one problem saying %q", tc.v, got, p, tc.bad)
		}
	}
	for v, want := range map[string]bool{"": false, "true": true, "1": true, "F": false} {
		var p Problems
		if got := p.Boolean("KUBEHZ_X", v); got != want || len(p) != 0 {
			t.Errorf("Boolean(%q) = %t, problems %v; want %t", v, got, p, want)
		}
	}
	var p Problems
	if p.Boolean("KUBEHZ_X", "yes"); len(p) != 1 || p[0].Var != "KUBEHZ_X" || !strings.Contains(p[0].Reason, "boolean") {
		t.Errorf("Boolean(yes) problems %v; want one saying boolean", p)
	}
}
