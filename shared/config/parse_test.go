package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// check loads minimal() with one variable set and asserts either the parsed
// field or that exactly that variable is reported with the given hint.
type check struct {
	name    string
	val     string
	want    any    // field value when accepted
	bad     string // substring of the problem when rejected
	secret  bool   // the value must not appear in the error
	omitted bool   // unset instead of set to val
}

func runChecks(t *testing.T, envVar string, field func(Observer) any, cases []check) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := with(map[string]string{envVar: tc.val})
			if tc.omitted {
				delete(env, envVar)
			}
			o, err := load(env)
			if tc.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := field(o); fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("%s = %v, want %v", envVar, got, tc.want)
				}
				return
			}
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Var != envVar {
				t.Fatalf("err = %v, want one problem with %s", err, envVar)
			}
			if !strings.Contains(cerr.Problems[0].Reason, tc.bad) {
				t.Fatalf("reason %q lacks %q", cerr.Problems[0].Reason, tc.bad)
			}
			if tc.secret && strings.Contains(err.Error(), strings.TrimSpace(tc.val)) {
				t.Fatalf("error %q echoes the value", err)
			}
		})
	}
}

func TestLoadObserver_ClusterID(t *testing.T) {
	long := strings.Repeat("a", 253)
	cases := []check{
		{name: "single char", val: "a", want: "a"},
		{name: "mixed", val: "K8S_lab.example-1.com", want: "K8S_lab.example-1.com"},
		{name: "trimmed", val: " c-2\t", want: "c-2"},
		{name: "253 chars", val: long, want: long},
		{name: "254 chars", val: long + "a", bad: "1-253"},
	}
	for _, v := range []string{"a/b", "a b", "a?b", "../up", "#frag", "-lead", "trail-", ".dot", "a%2Fb"} {
		cases = append(cases, check{name: "rejects " + v, val: v, bad: "letter or digit"})
	}
	runChecks(t, "CLUSTER_ID", func(o Observer) any { return o.ClusterID }, cases)
}

func TestLoadObserver_APIURL(t *testing.T) {
	runChecks(t, "KUBEHZ_API_URL", func(o Observer) any { return o.APIURL }, []check{
		{name: "https", val: "https://api.kubehz.dev", want: "https://api.kubehz.dev"},
		{name: "trailing slash trimmed", val: " https://api.kubehz.dev/ ", want: "https://api.kubehz.dev"},
		{name: "path prefix kept", val: "https://x.dev/kubehz///", want: "https://x.dev/kubehz"},
		{name: "http localhost", val: "http://localhost:3000", want: "http://localhost:3000"},
		{name: "http 127.0.0.1", val: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080"},
		{name: "http ::1", val: "http://[::1]:8080", want: "http://[::1]:8080"},
		{name: "http elsewhere", val: "http://api.kubehz.dev", bad: "https"},
		{name: "http localhost lookalike", val: "http://localhost.evil.dev", bad: "https"},
		{name: "other scheme", val: "ftp://api.kubehz.dev", bad: "https"},
		{name: "no scheme", val: "api.kubehz.dev", bad: "host"},
		{name: "no host", val: "https:///path", bad: "host"},
		{name: "unparsable", val: "https://a b.dev:x", bad: "not a URL"},
		{name: "credentials", val: "https://u:hunter2@api.kubehz.dev", bad: "credentials"},
		{name: "query", val: "https://api.kubehz.dev/?x=1", bad: "query"},
	})
}

func TestLoadObserver_Token(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	runChecks(t, "KUBEHZ_AGENT_TOKEN", func(o Observer) any { return o.AgentToken.Reveal() }, []check{
		{name: "from env", val: goodToken, want: goodToken},
		{name: "unset", omitted: true, want: ""},
		{name: "short", val: "khz_agt_short", bad: "malformed", secret: true},
		{name: "claim code", val: "khzc_" + hex64, bad: "claim code", secret: true},
		{name: "65 hex digits", val: "khz_agt_" + hex64 + "0", bad: "72 characters", secret: true},
		{name: "uppercase hex", val: "khz_agt_" + strings.ToUpper(hex64), bad: "lowercase hex", secret: true},
	})
}

func TestLoadObserver_SecretLocation(t *testing.T) {
	runChecks(t, "KUBEHZ_NAMESPACE", func(o Observer) any { return o.Namespace }, []check{
		{name: "default", omitted: true, want: "kubehz-system"},
		{name: "override", val: "ops-1", want: "ops-1"},
		{name: "uppercase", val: "Kube-System", bad: "DNS-1123 label"},
		{name: "underscore", val: "kube_system", bad: "DNS-1123 label"},
		{name: "leading dash", val: "-x", bad: "DNS-1123 label"},
		{name: "slash", val: "a/b", bad: "DNS-1123 label"},
		{name: "dot", val: "a.b", bad: "DNS-1123 label"},
		{name: "64 chars", val: strings.Repeat("a", 64), bad: "DNS-1123 label"},
	})
	runChecks(t, "KUBEHZ_SECRET_NAME", func(o Observer) any { return o.SecretName }, []check{
		{name: "default", omitted: true, want: "kubehz-agent"},
		{name: "dotted", val: "agent.v2", want: "agent.v2"},
		{name: "uppercase", val: "Agent", bad: "DNS-1123 subdomain"},
		{name: "slash", val: "a/b", bad: "DNS-1123 subdomain"},
	})
}

func TestLoadObserver_Durations(t *testing.T) {
	for _, v := range []string{"KUBEHZ_FULL_INTERVAL", "KUBEHZ_DEBOUNCE", "KUBEHZ_MIN_GAP", "KUBEHZ_READY_AFTER_FAILING"} {
		t.Run(v, func(t *testing.T) {
			runChecks(t, v, func(o Observer) any {
				return map[string]time.Duration{
					"KUBEHZ_FULL_INTERVAL": o.FullInterval, "KUBEHZ_DEBOUNCE": o.Debounce, "KUBEHZ_MIN_GAP": o.MinGap,
					"KUBEHZ_READY_AFTER_FAILING": o.ReadyAfterFailing,
				}[v]
			}, []check{
				{name: "override", val: "90s", want: 90 * time.Second},
				{name: "smallest", val: "1ns", want: time.Nanosecond},
				{name: "zero", val: "0s", bad: "greater than 0"},
				{name: "negative", val: "-5s", bad: "greater than 0"},
				{name: "no unit", val: "60", bad: "Go duration"},
				{name: "garbage", val: "abc", bad: "Go duration"},
			})
		})
	}
}

func TestLoadReadiness_ReadsTheThresholdAloneAndAgreesWithLoadObserver(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want time.Duration
		bad  bool
	}{
		{name: "default without any other setting", env: map[string]string{}, want: 5 * time.Minute},
		{name: "override", env: map[string]string{"KUBEHZ_READY_AFTER_FAILING": "90s"}, want: 90 * time.Second},
		{name: "zero", env: map[string]string{"KUBEHZ_READY_AFTER_FAILING": "0s"}, bad: true},
		{name: "no unit", env: map[string]string{"KUBEHZ_READY_AFTER_FAILING": "300"}, bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadReadiness(context.Background(), envconfig.MapLookuper(tc.env))
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), "KUBEHZ_READY_AFTER_FAILING") {
					t.Fatalf("err = %v, want one naming KUBEHZ_READY_AFTER_FAILING", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("LoadReadiness = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestLoadObserver_ReportNamespaces(t *testing.T) {
	cases := []check{{name: "unset", omitted: true, want: false}}
	for _, v := range []string{"1", "t", "T", "TRUE", "true", "True"} {
		cases = append(cases, check{name: v, val: v, want: true})
	}
	for _, v := range []string{"0", "f", "F", "FALSE", "false", "False"} {
		cases = append(cases, check{name: v, val: v, want: false})
	}
	for _, v := range []string{"yes", "on", "2"} {
		cases = append(cases, check{name: v, val: v, bad: "boolean"})
	}
	runChecks(t, "KUBEHZ_REPORT_NAMESPACES", func(o Observer) any { return o.ReportNamespaces }, cases)
}

// A level the agent does not know is refused like every other bad setting
// (exit 2, naming the allowed values): read as info, `verbose` or `trace`
// would hide the very lines the user asked for.
func TestLoadObserver_LogLevelRefusesAnUnknownLevel(t *testing.T) {
	cases := []check{{name: "unset", omitted: true, want: slog.LevelInfo}, {name: "blank", val: "  ", want: slog.LevelInfo}}
	for v, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "DEBUG": slog.LevelDebug, "Debug": slog.LevelDebug, "warn": slog.LevelWarn,
		"WARN": slog.LevelWarn, "error": slog.LevelError, "ERROR": slog.LevelError, "info": slog.LevelInfo,
		"INFO": slog.LevelInfo,
	} {
		cases = append(cases, check{name: v, val: v, want: want})
	}
	for _, v := range []string{"verbose", "trace", "warning", "0", "-4", "info+"} {
		cases = append(cases, check{name: v, val: v, bad: `"` + v + `" is not a log level (use debug, info, warn or error)`})
	}
	runChecks(t, "KUBEHZ_LOG_LEVEL", func(o Observer) any { return o.LogLevel }, cases)
}

// fmtAll prints o every way a careless log line might.
func fmtAll(o Observer) string {
	return fmt.Sprintf("%v %+v %#v %s", o, o, o, o.AgentToken)
}
