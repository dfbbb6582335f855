package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/testkit"
)

const goodToken = "khz_agt_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// pastedHex is the secret part of goodToken: what must never be printed.
var pastedHex = strings.TrimPrefix(goodToken, "khz_agt_")

// check is one case of runActorChecks: testkit.MinimalEnv() with one variable set.
type check = testkit.Setting

func loadActor(env map[string]string) (settings, error) {
	return loadSettings(context.Background(), envconfig.MapLookuper(env))
}

func actorDefaults(t *testing.T) settings {
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
		DesiredPoll:         60 * time.Second,
		MaxReplicas:         50,
		HealEvictionTimeout: 300 * time.Second,
		Deployment:          "actor",
		// deploy/actor's local healing limits, written out.
		HealLimits: heal.Limits{MaxInFlight: 3, MinCooldown: 600 * time.Second,
			MinStartupTimeout: 600 * time.Second, MinUnhealthyAfter: 300 * time.Second},
	}
}

func TestLoadSettings_DefaultsBlanksAndOverrides(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		tweak func(a *settings)
	}{
		{name: "minimal gets every default and no token", env: testkit.MinimalEnv(), tweak: func(*settings) {}},
		{
			name: "blank values count as unset",
			env: testkit.Env(map[string]string{
				"KUBEHZ_DESIRED_POLL_SECONDS": "  ", "KUBEHZ_MAX_REPLICAS": "", "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS": "\t",
			}),
			tweak: func(*settings) {},
		},
		{
			name: "overrides",
			env: testkit.Env(map[string]string{
				"KUBEHZ_DESIRED_POLL_SECONDS": "90", "KUBEHZ_MAX_REPLICAS": " 7 ",
				"KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS": "600", "KUBEHZ_MD_NAMESPACE": "machines",
				"KUBEHZ_LOG_LEVEL": "warn",
			}),
			tweak: func(a *settings) {
				a.DesiredPoll, a.MaxReplicas, a.HealEvictionTimeout = 90*time.Second, 7, 10*time.Minute
				a.MDNamespace, a.LogLevel = "machines", slog.LevelWarn
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadActor(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			want := actorDefaults(t)
			tc.tweak(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func runActorChecks(t *testing.T, envVar string, field func(settings) any, cases []check) {
	t.Helper()
	testkit.Settings[settings]{Base: testkit.MinimalEnv, Load: loadActor, Header: "invalid configuration:"}.Check(t, envVar, field, cases)
}

func TestLoadSettings_DesiredPollSeconds(t *testing.T) {
	runActorChecks(t, "KUBEHZ_DESIRED_POLL_SECONDS", func(a settings) any { return a.DesiredPoll }, []check{
		{Name: "default", Omitted: true, Want: time.Minute},
		{Name: "90", Val: "90", Want: 90 * time.Second},
		{Name: "smallest", Val: "1", Want: time.Second},
		{Name: "a day", Val: "86400", Want: 24 * time.Hour},
		{Name: "zero", Val: "0", Bad: "must be from 1 to 86400, got 0"},
		{Name: "negative", Val: "-5", Bad: "must be from 1 to 86400, got -5"},
		{Name: "with a unit", Val: "60s", Bad: `"60s" is not a whole number of seconds`},
		{Name: "garbage", Val: "abc", Bad: `"abc" is not a whole number of seconds`},
		{Name: "fraction", Val: "1.5", Bad: "not a whole number"},
		{Name: "over a day", Val: "86401", Bad: "must be from 1 to 86400"},
		{Name: "overflows int", Val: "99999999999999999999", Bad: "must be from 1 to 86400, got 99999999999999999999"},
	})
}

func TestLoadSettings_MaxReplicas(t *testing.T) {
	runActorChecks(t, "KUBEHZ_MAX_REPLICAS", func(a settings) any { return a.MaxReplicas }, []check{
		{Name: "default", Omitted: true, Want: 50},
		{Name: "override", Val: "12", Want: 12},
		{Name: "smallest", Val: "1", Want: 1},
		{Name: "largest", Val: "10000", Want: 10000},
		{Name: "zero", Val: "0", Bad: "must be from 1 to 10000, got 0"},
		{Name: "negative", Val: "-1", Bad: "must be from 1 to 10000, got -1"},
		{Name: "garbage", Val: "abc", Bad: `"abc" is not a whole number of replicas`},
		{Name: "just over", Val: "10001", Bad: "must be from 1 to 10000, got 10001"},
		{Name: "a million", Val: "1000000", Bad: "must be from 1 to 10000, got 1000000"},
	})
	runActorChecks(t, "KUBEHZ_MD_NAMESPACE", func(a settings) any { return a.MDNamespace }, []check{
		{Name: "md namespace default", Omitted: true, Want: "kube-system"},
		{Name: "md namespace override", Val: "machines", Want: "machines"},
		{Name: "md namespace uppercase", Val: "Kube-System", Bad: "DNS-1123 label"},
		{Name: "md namespace underscore", Val: "kube_system", Bad: "DNS-1123 label"},
		{Name: "md namespace leading dash", Val: "-x", Bad: "DNS-1123 label"},
		{Name: "md namespace slash", Val: "a/b", Bad: "DNS-1123 label"},
	})
}

func TestLoadSettings_HealEvictionTimeout(t *testing.T) {
	runActorChecks(t, "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS", func(a settings) any { return a.HealEvictionTimeout }, []check{
		{Name: "default", Omitted: true, Want: 5 * time.Minute},
		{Name: "600", Val: "600", Want: 10 * time.Minute},
		{Name: "smallest", Val: "60", Want: time.Minute},
		{Name: "zero", Val: "0", Bad: "must be from 60 to 86400, got 0"},
		{Name: "negative", Val: "-5", Bad: "must be from 60 to 86400, got -5"},
		{Name: "garbage", Val: "abc", Bad: `"abc" is not a whole number of seconds`},
		{Name: "59", Val: "59", Bad: "must be from 60 to 86400, got 59"},
		{Name: "1", Val: "1", Bad: "must be from 60 to 86400, got 1"},
		{Name: "with a unit", Val: "5m", Bad: "not a whole number of seconds"},
	})
}

func TestLoadSettings_NamesEveryBadVariableAtOnce(t *testing.T) {
	badToken := "khz_agt_" + strings.Repeat("E", 64)
	env := map[string]string{
		"CLUSTER_ID":                           "a/b",
		"KUBEHZ_API_URL":                       "http://api.kubehz.dev",
		"KUBEHZ_AGENT_TOKEN":                   badToken,
		"KUBEHZ_NAMESPACE":                     "Kube-System",
		"KUBEHZ_SECRET_NAME":                   "Bad_Name",
		"KUBEHZ_MD_NAMESPACE":                  "kube_system",
		"KUBEHZ_DESIRED_POLL_SECONDS":          "60s",
		"KUBEHZ_MAX_REPLICAS":                  "1000000",
		"KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS": "59",
		"KUBEHZ_HEAL_MAX_IN_FLIGHT":            "-1",
		"KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS":     "10m",
		// The observer's variables are not the actor's business.
		"KUBEHZ_FULL_INTERVAL": "abc",
	}
	_, err := loadActor(env)
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
		"KUBEHZ_MD_NAMESPACE", "KUBEHZ_DESIRED_POLL_SECONDS", "KUBEHZ_MAX_REPLICAS",
		"KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS", "KUBEHZ_HEAL_MAX_IN_FLIGHT", "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS",
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

func TestLoadSettings_MissingRequiredIsFatal(t *testing.T) {
	_, err := loadActor(map[string]string{})
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("err = %v, want *config.Error", err)
	}
	want := []config.Problem{{Var: "CLUSTER_ID", Reason: "is required"}, {Var: "KUBEHZ_API_URL", Reason: "is required"}}
	if !reflect.DeepEqual(cerr.Problems, want) {
		t.Fatalf("problems = %v, want %v", cerr.Problems, want)
	}
}

func TestSettingsLogValue_RedactsTheToken(t *testing.T) {
	for _, tc := range []struct {
		name, tok, want string
	}{
		{name: "set", tok: goodToken, want: `"agentToken":"khz_agt_***redacted***"`},
		{name: "unset", tok: "", want: `"agentToken":"<unset>"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := loadActor(testkit.Env(map[string]string{"KUBEHZ_AGENT_TOKEN": tc.tok}))
			if err != nil {
				t.Fatal(err)
			}
			testkit.LogsRedacted(t, a, pastedHex, tc.want, `"desiredPoll":"1m0s"`, `"maxReplicas":50`,
				`"healEvictionTimeout":"5m0s"`, `"mdNamespace":"kube-system"`, `"healMaxInFlight":3`, `"healMinCooldown":"10m0s"`,
				`"healMinNodeStartupTimeout":"10m0s"`, `"healMinUnhealthyAfter":"5m0s"`)
		})
	}
}

func TestLoadSettings_TokenPastedIntoActorSettingsIsNeverEchoed(t *testing.T) {
	for _, v := range []string{"KUBEHZ_DESIRED_POLL_SECONDS", "KUBEHZ_MAX_REPLICAS", "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS",
		"KUBEHZ_HEAL_MAX_IN_FLIGHT", "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS", "KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS",
		"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS"} {
		t.Run(v, func(t *testing.T) {
			_, err := loadActor(testkit.Env(map[string]string{v: goodToken}))
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

func TestLoadSettings_Deployment(t *testing.T) {
	runActorChecks(t, "KUBEHZ_ACTOR_DEPLOYMENT", func(a settings) any { return a.Deployment }, []check{
		{Name: "default is what deploy/actor ships", Omitted: true, Want: "actor"},
		{Name: "prefixed", Val: "team-actor", Want: "team-actor"},
		{Name: "uppercase", Val: "Actor", Bad: "DNS-1123 subdomain"},
		{Name: "slash", Val: "kube-system/actor", Bad: "DNS-1123 subdomain"},
	})
}

// The local healing limits: the platform's document can only tighten them,
// so a value that could not bind, or that would loosen the contract's own
// 60 s floors, is refused at start.
func TestLoadSettings_HealLimits(t *testing.T) {
	runActorChecks(t, "KUBEHZ_HEAL_MAX_IN_FLIGHT", func(a settings) any { return a.HealLimits.MaxInFlight }, []check{
		{Name: "max in flight default", Omitted: true, Want: 3},
		{Name: "max in flight 0 rules deletes out", Val: "0", Want: 0},
		{Name: "max in flight at the contract's 1000", Val: "1000", Want: 1000},
		{Name: "max in flight past 1000", Val: "1001", Bad: "must be from 0 to 1000, got 1001"},
		{Name: "max in flight negative", Val: "-1", Bad: "must be from 0 to 1000, got -1"},
		{Name: "max in flight a percentage", Val: "40%", Bad: `"40%" is not a whole number of Machines`},
	})
	runActorChecks(t, "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS", func(a settings) any { return a.HealLimits.MinCooldown }, []check{
		{Name: "min cooldown default", Omitted: true, Want: 10 * time.Minute},
		{Name: "min cooldown 0 leaves the document's", Val: "0", Want: time.Duration(0)},
		{Name: "min cooldown a day", Val: "86400", Want: 24 * time.Hour},
		{Name: "min cooldown past a day", Val: "86401", Bad: "must be from 0 to 86400, got 86401"},
		{Name: "min cooldown with a unit", Val: "10m", Bad: `"10m" is not a whole number of seconds`},
	})
	for _, v := range []struct {
		name  string
		field func(settings) any
		def   time.Duration
	}{
		{"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS", func(a settings) any { return a.HealLimits.MinStartupTimeout }, 10 * time.Minute},
		{"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS", func(a settings) any { return a.HealLimits.MinUnhealthyAfter }, 5 * time.Minute},
	} {
		runActorChecks(t, v.name, v.field, []check{
			{Name: v.name + " default", Omitted: true, Want: v.def},
			{Name: v.name + " at the contract's 60 s floor", Val: "60", Want: time.Minute},
			{Name: v.name + " below the 60 s floor", Val: "59", Bad: "must be from 60 to 86400, got 59"},
			{Name: v.name + " zero", Val: "0", Bad: "must be from 60 to 86400, got 0"},
			{Name: v.name + " past a day", Val: "86401", Bad: "must be from 60 to 86400, got 86401"},
			{Name: v.name + " garbage", Val: "soon", Bad: `"soon" is not a whole number of seconds`},
		})
	}
}

// A local healing limit that could not bind, or would loosen the contract's
// floors, stops the actor at start with exit 2, naming the variable and
// the range, before anything is sent.
func TestRun_BadHealLimitExits2NamingIt(t *testing.T) {
	env := map[string]string{
		"CLUSTER_ID": "c1.example.com", "KUBEHZ_API_URL": "https://api.kubehz.dev",
		"KUBEHZ_HEAL_MAX_IN_FLIGHT":                    "1001",
		"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS": "30",
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"actor"}, func(k string) string { return env[k] }, &stdout, &stderr)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || config.ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d), want a configuration error, exit 2", err, config.ExitCode(err))
	}
	for _, want := range []string{
		"KUBEHZ_HEAL_MAX_IN_FLIGHT: must be from 0 to 1000, got 1001",
		"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS: must be from 60 to 86400, got 30",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("wrote stdout %q, stderr %q before refusing", stdout.String(), stderr.String())
	}
}
