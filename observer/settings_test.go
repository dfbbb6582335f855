package main

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/testkit"
)

// check is one case of runObserverChecks: testkit.MinimalEnv() with one variable set.
type check = testkit.Setting

func loadObserver(env map[string]string) (settings, error) {
	return loadSettings(context.Background(), envconfig.MapLookuper(env))
}

func observerDefaults(t *testing.T) settings {
	api, err := url.Parse("https://api.kubehz.dev")
	if err != nil {
		t.Fatal(err)
	}
	return settings{
		Common: config.Common{
			ClusterID:        "c1",
			APIURL:           api,
			TokenFile:        "/var/run/secrets/kubehz/agent-token",
			Namespace:        "kubehz-system",
			SecretName:       "kubehz-agent",
			MDNamespace:      "kube-system",
			ActionsConfigMap: "kubehz-actions",
			ActorLease:       "kubehz-actor",
			LogLevel:         slog.LevelInfo,
		},
		FullInterval: 60 * time.Second,
		Debounce:     10 * time.Second,
		MinGap:       15 * time.Second,

		ReadyAfterFailing: 5 * time.Minute,
	}
}

// The observer's own variables, and one common one to show the shared part
// rides along; shared/config's tests cover every common variable.
func TestLoadSettings_DefaultsBlanksAndOverrides(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		tweak func(o *settings)
	}{
		{name: "minimal gets every default and no token", env: testkit.MinimalEnv(), tweak: func(*settings) {}},
		{
			name: "blank values count as unset",
			env: testkit.Env(map[string]string{
				"KUBEHZ_FULL_INTERVAL": "  ", "KUBEHZ_DEBOUNCE": "", "KUBEHZ_MIN_GAP": "\t",
				"KUBEHZ_REPORT_NAMESPACES": "", "KUBEHZ_READY_AFTER_FAILING": " ",
			}),
			tweak: func(*settings) {},
		},
		{
			name: "overrides",
			env: testkit.Env(map[string]string{
				"KUBEHZ_FULL_INTERVAL": "2m", "KUBEHZ_DEBOUNCE": "500ms", "KUBEHZ_MIN_GAP": "1s",
				"KUBEHZ_REPORT_NAMESPACES": "true", "KUBEHZ_READY_AFTER_FAILING": "90s", "KUBEHZ_MD_NAMESPACE": "machines",
			}),
			tweak: func(o *settings) {
				o.FullInterval, o.Debounce, o.MinGap = 2*time.Minute, 500*time.Millisecond, time.Second
				o.ReportNamespaces, o.ReadyAfterFailing, o.MDNamespace = true, 90*time.Second, "machines"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadObserver(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			want := observerDefaults(t)
			tc.tweak(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func runObserverChecks(t *testing.T, envVar string, field func(settings) any, cases []check) {
	t.Helper()
	testkit.Settings[settings]{Base: testkit.MinimalEnv, Load: loadObserver, Header: "invalid configuration:"}.Check(t, envVar, field, cases)
}

func TestLoadSettings_Durations(t *testing.T) {
	for _, v := range []string{"KUBEHZ_FULL_INTERVAL", "KUBEHZ_DEBOUNCE", "KUBEHZ_MIN_GAP", "KUBEHZ_READY_AFTER_FAILING"} {
		t.Run(v, func(t *testing.T) {
			runObserverChecks(t, v, func(o settings) any {
				return map[string]time.Duration{
					"KUBEHZ_FULL_INTERVAL": o.FullInterval, "KUBEHZ_DEBOUNCE": o.Debounce, "KUBEHZ_MIN_GAP": o.MinGap,
					"KUBEHZ_READY_AFTER_FAILING": o.ReadyAfterFailing,
				}[v]
			}, []check{
				{Name: "override", Val: "90s", Want: 90 * time.Second},
				{Name: "smallest", Val: "1ns", Want: time.Nanosecond},
				{Name: "zero", Val: "0s", Bad: "greater than 0"},
				{Name: "negative", Val: "-5s", Bad: "greater than 0"},
				{Name: "no unit", Val: "60", Bad: "Go duration"},
				{Name: "garbage", Val: "abc", Bad: "Go duration"},
			})
		})
	}
}

func TestLoadReadiness_ReadsTheThresholdAloneAndAgreesWithLoadSettings(t *testing.T) {
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
			got, err := loadReadiness(context.Background(), envconfig.MapLookuper(tc.env))
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), "KUBEHZ_READY_AFTER_FAILING") {
					t.Fatalf("err = %v, want one naming KUBEHZ_READY_AFTER_FAILING", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("loadReadiness = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestLoadSettings_ReportNamespaces(t *testing.T) {
	cases := []check{{Name: "unset", Omitted: true, Want: false}}
	for _, v := range []string{"1", "t", "T", "TRUE", "true", "True"} {
		cases = append(cases, check{Name: v, Val: v, Want: true})
	}
	for _, v := range []string{"0", "f", "F", "FALSE", "false", "False"} {
		cases = append(cases, check{Name: v, Val: v, Want: false})
	}
	for _, v := range []string{"yes", "on", "2"} {
		cases = append(cases, check{Name: v, Val: v, Bad: "boolean"})
	}
	runObserverChecks(t, "KUBEHZ_REPORT_NAMESPACES", func(o settings) any { return o.ReportNamespaces }, cases)
}

func TestLoadSettings_NamesEveryBadVariableAtOnce(t *testing.T) {
	badToken := "khz_agt_" + strings.Repeat("E", 64)
	env := map[string]string{
		"CLUSTER_ID":                 "a/b",
		"KUBEHZ_API_URL":             "http://api.kubehz.dev",
		"KUBEHZ_AGENT_TOKEN":         badToken,
		"KUBEHZ_NAMESPACE":           "Kube-System",
		"KUBEHZ_SECRET_NAME":         "Bad_Name",
		"KUBEHZ_MD_NAMESPACE":        "kube_system",
		"KUBEHZ_FULL_INTERVAL":       "abc",
		"KUBEHZ_DEBOUNCE":            "-1s",
		"KUBEHZ_MIN_GAP":             "0s",
		"KUBEHZ_REPORT_NAMESPACES":   "yes",
		"KUBEHZ_READY_AFTER_FAILING": "300",
	}
	_, err := loadObserver(env)
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("err = %v, want *config.Error", err)
	}
	var vars []string
	for _, p := range cerr.Problems {
		vars = append(vars, p.Var)
	}
	want := []string{
		"CLUSTER_ID", "KUBEHZ_API_URL", "KUBEHZ_AGENT_TOKEN", "KUBEHZ_NAMESPACE", "KUBEHZ_SECRET_NAME",
		"KUBEHZ_MD_NAMESPACE", "KUBEHZ_FULL_INTERVAL", "KUBEHZ_DEBOUNCE", "KUBEHZ_MIN_GAP", "KUBEHZ_REPORT_NAMESPACES",
		"KUBEHZ_READY_AFTER_FAILING",
	}
	if !reflect.DeepEqual(vars, want) {
		t.Fatalf("named %v, want %v", vars, want)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != len(want)+1 {
		t.Fatalf("want a header and one line per variable, got:\n%s", err)
	}
	if strings.Contains(err.Error(), badToken) {
		t.Fatal("error echoes the token")
	}
}

// The observer's own settings join the common ones on the start-up line,
// which still never shows the token (shared/config tests the unset case).
func TestSettings_PrintableFormRedactsToken(t *testing.T) {
	o, err := loadObserver(testkit.Env(map[string]string{"KUBEHZ_AGENT_TOKEN": goodToken}))
	if err != nil {
		t.Fatal(err)
	}
	testkit.LogsRedacted(t, o, pastedHex, `"agentToken":"khz_agt_***redacted***"`, `"fullInterval":"1m0s"`,
		`"debounce":"10s"`, `"minGap":"15s"`, `"reportNamespaces":false`, `"readyAfterFailing":"5m0s"`)
}

func TestLoadSettings_TokenPastedIntoObserverSettingsIsNeverEchoed(t *testing.T) {
	for _, v := range []string{"KUBEHZ_FULL_INTERVAL", "KUBEHZ_DEBOUNCE", "KUBEHZ_MIN_GAP", "KUBEHZ_REPORT_NAMESPACES",
		"KUBEHZ_READY_AFTER_FAILING"} {
		t.Run(v, func(t *testing.T) {
			_, err := loadObserver(testkit.Env(map[string]string{v: goodToken}))
			var cerr *config.Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Var != v {
				t.Fatalf("err = %v, want one problem with %s", err, v)
			}
			if strings.Contains(err.Error(), pastedHex) {
				t.Fatalf("error shows the token: %v", err)
			}
		})
	}
}
