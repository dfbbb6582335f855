package settings

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/config"
)

const goodToken = "khz_agt_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// pastedHex is the secret part of goodToken: what must never be printed.
var pastedHex = strings.TrimPrefix(goodToken, "khz_agt_")

func minimal() map[string]string {
	return map[string]string{"CLUSTER_ID": "c1", "KUBEHZ_API_URL": "https://api.kubehz.dev"}
}

func with(overrides map[string]string) map[string]string {
	env := minimal()
	for k, v := range overrides {
		env[k] = v
	}
	return env
}

// check loads minimal() with one variable set and asserts either the parsed
// field or that exactly that variable is reported with the given hint.
type check struct {
	name    string
	val     string
	want    any    // field value when accepted
	bad     string // substring of the problem when rejected
	omitted bool   // unset instead of set to val
}

func loadActor(env map[string]string) (Actor, error) {
	return Load(context.Background(), envconfig.MapLookuper(env))
}

func actorDefaults(t *testing.T) Actor {
	api, err := url.Parse("https://api.kubehz.dev")
	if err != nil {
		t.Fatal(err)
	}
	return Actor{
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
		HealLimits: HealLimits{MaxInFlight: 3, MinCooldown: 600 * time.Second,
			MinStartupTimeout: 600 * time.Second, MinUnhealthyAfter: 300 * time.Second},
	}
}

func TestLoad_Settings(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		tweak func(a *Actor)
	}{
		{name: "minimal gets every default and no token", env: minimal(), tweak: func(*Actor) {}},
		{
			name: "blank values count as unset",
			env: with(map[string]string{
				"KUBEHZ_DESIRED_POLL_SECONDS": "  ", "KUBEHZ_MAX_REPLICAS": "", "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS": "\t",
			}),
			tweak: func(*Actor) {},
		},
		{
			name: "overrides",
			env: with(map[string]string{
				"KUBEHZ_DESIRED_POLL_SECONDS": "90", "KUBEHZ_MAX_REPLICAS": " 7 ",
				"KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS": "600", "KUBEHZ_MD_NAMESPACE": "machines",
				"KUBEHZ_LOG_LEVEL": "warn",
			}),
			tweak: func(a *Actor) {
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

// runActorChecks loads the actor's settings once per case.
func runActorChecks(t *testing.T, envVar string, field func(Actor) any, cases []check) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := with(map[string]string{envVar: tc.val})
			if tc.omitted {
				delete(env, envVar)
			}
			a, err := loadActor(env)
			if tc.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := field(a); fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("%s = %v, want %v", envVar, got, tc.want)
				}
				return
			}
			var cerr *config.Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Var != envVar {
				t.Fatalf("err = %v, want one problem with %s", err, envVar)
			}
			if !strings.Contains(cerr.Problems[0].Reason, tc.bad) {
				t.Fatalf("reason %q lacks %q", cerr.Problems[0].Reason, tc.bad)
			}
		})
	}
}

func TestLoad_DesiredPollSeconds(t *testing.T) {
	runActorChecks(t, "KUBEHZ_DESIRED_POLL_SECONDS", func(a Actor) any { return a.DesiredPoll }, []check{
		{name: "default", omitted: true, want: time.Minute},
		{name: "90", val: "90", want: 90 * time.Second},
		{name: "smallest", val: "1", want: time.Second},
		{name: "a day", val: "86400", want: 24 * time.Hour},
		{name: "zero", val: "0", bad: "must be from 1 to 86400, got 0"},
		{name: "negative", val: "-5", bad: "must be from 1 to 86400, got -5"},
		{name: "with a unit", val: "60s", bad: `"60s" is not a whole number of seconds`},
		{name: "garbage", val: "abc", bad: `"abc" is not a whole number of seconds`},
		{name: "fraction", val: "1.5", bad: "not a whole number"},
		{name: "over a day", val: "86401", bad: "must be from 1 to 86400"},
		{name: "overflows int", val: "99999999999999999999", bad: "must be from 1 to 86400, got 99999999999999999999"},
	})
}

func TestLoad_MaxReplicas(t *testing.T) {
	runActorChecks(t, "KUBEHZ_MAX_REPLICAS", func(a Actor) any { return a.MaxReplicas }, []check{
		{name: "default", omitted: true, want: 50},
		{name: "override", val: "12", want: 12},
		{name: "smallest", val: "1", want: 1},
		{name: "largest", val: "10000", want: 10000},
		{name: "zero", val: "0", bad: "must be from 1 to 10000, got 0"},
		{name: "negative", val: "-1", bad: "must be from 1 to 10000, got -1"},
		{name: "garbage", val: "abc", bad: `"abc" is not a whole number of replicas`},
		{name: "just over", val: "10001", bad: "must be from 1 to 10000, got 10001"},
		{name: "a million", val: "1000000", bad: "must be from 1 to 10000, got 1000000"},
	})
	runActorChecks(t, "KUBEHZ_MD_NAMESPACE", func(a Actor) any { return a.MDNamespace }, []check{
		{name: "md namespace default", omitted: true, want: "kube-system"},
		{name: "md namespace override", val: "machines", want: "machines"},
		{name: "md namespace uppercase", val: "Kube-System", bad: "DNS-1123 label"},
		{name: "md namespace underscore", val: "kube_system", bad: "DNS-1123 label"},
		{name: "md namespace leading dash", val: "-x", bad: "DNS-1123 label"},
		{name: "md namespace slash", val: "a/b", bad: "DNS-1123 label"},
	})
}

func TestLoad_HealEvictionTimeout(t *testing.T) {
	runActorChecks(t, "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS", func(a Actor) any { return a.HealEvictionTimeout }, []check{
		{name: "default", omitted: true, want: 5 * time.Minute},
		{name: "600", val: "600", want: 10 * time.Minute},
		{name: "smallest", val: "60", want: time.Minute},
		{name: "zero", val: "0", bad: "must be from 60 to 86400, got 0"},
		{name: "negative", val: "-5", bad: "must be from 60 to 86400, got -5"},
		{name: "garbage", val: "abc", bad: `"abc" is not a whole number of seconds`},
		{name: "59", val: "59", bad: "must be from 60 to 86400, got 59"},
		{name: "1", val: "1", bad: "must be from 60 to 86400, got 1"},
		{name: "with a unit", val: "5m", bad: "not a whole number of seconds"},
	})
}

func TestLoad_NamesEveryBadVariableAtOnce(t *testing.T) {
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

func TestLoad_MissingRequiredIsFatal(t *testing.T) {
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

func TestLogValue_RedactsTheToken(t *testing.T) {
	for _, tc := range []struct {
		name, tok, want string
	}{
		{name: "set", tok: goodToken, want: `"agentToken":"khz_agt_***redacted***"`},
		{name: "unset", tok: "", want: `"agentToken":"<unset>"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := loadActor(with(map[string]string{"KUBEHZ_AGENT_TOKEN": tc.tok}))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			slog.New(slog.NewJSONHandler(&b, nil)).Info("Config", "config", a)
			for _, part := range []string{
				tc.want, `"desiredPoll":"1m0s"`, `"maxReplicas":50`, `"healEvictionTimeout":"5m0s"`, `"mdNamespace":"kube-system"`,
				`"healMaxInFlight":3`, `"healMinCooldown":"10m0s"`, `"healMinNodeStartupTimeout":"10m0s"`, `"healMinUnhealthyAfter":"5m0s"`,
			} {
				if !strings.Contains(b.String(), part) {
					t.Fatalf("log line lacks %s: %s", part, b.String())
				}
			}
			printed := b.String() + fmt.Sprintf("%v %+v %#v %s", a, a, a, a.AgentToken)
			if strings.Contains(printed, pastedHex) {
				t.Fatalf("token leaked: %s", printed)
			}
		})
	}
}

func TestLoad_TokenPastedIntoActorSettingsIsNeverEchoed(t *testing.T) {
	for _, v := range []string{"KUBEHZ_DESIRED_POLL_SECONDS", "KUBEHZ_MAX_REPLICAS", "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS",
		"KUBEHZ_HEAL_MAX_IN_FLIGHT", "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS", "KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS",
		"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS"} {
		t.Run(v, func(t *testing.T) {
			_, err := loadActor(with(map[string]string{v: goodToken}))
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

func TestLoad_Deployment(t *testing.T) {
	runActorChecks(t, "KUBEHZ_ACTOR_DEPLOYMENT", func(a Actor) any { return a.Deployment }, []check{
		{name: "default is what deploy/actor ships", omitted: true, want: "actor"},
		{name: "prefixed", val: "team-actor", want: "team-actor"},
		{name: "uppercase", val: "Actor", bad: "DNS-1123 subdomain"},
		{name: "slash", val: "kube-system/actor", bad: "DNS-1123 subdomain"},
	})
}

// The local healing limits: the platform's document can only tighten them,
// so a value that could not bind, or that would loosen the contract's own
// 60 s floors, is refused at start.
func TestLoad_HealLimits(t *testing.T) {
	runActorChecks(t, "KUBEHZ_HEAL_MAX_IN_FLIGHT", func(a Actor) any { return a.HealLimits.MaxInFlight }, []check{
		{name: "max in flight default", omitted: true, want: 3},
		{name: "max in flight 0 rules deletes out", val: "0", want: 0},
		{name: "max in flight at the contract's 1000", val: "1000", want: 1000},
		{name: "max in flight past 1000", val: "1001", bad: "must be from 0 to 1000, got 1001"},
		{name: "max in flight negative", val: "-1", bad: "must be from 0 to 1000, got -1"},
		{name: "max in flight a percentage", val: "40%", bad: `"40%" is not a whole number of Machines`},
	})
	runActorChecks(t, "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS", func(a Actor) any { return a.HealLimits.MinCooldown }, []check{
		{name: "min cooldown default", omitted: true, want: 10 * time.Minute},
		{name: "min cooldown 0 leaves the document's", val: "0", want: time.Duration(0)},
		{name: "min cooldown a day", val: "86400", want: 24 * time.Hour},
		{name: "min cooldown past a day", val: "86401", bad: "must be from 0 to 86400, got 86401"},
		{name: "min cooldown with a unit", val: "10m", bad: `"10m" is not a whole number of seconds`},
	})
	for _, v := range []struct {
		name  string
		field func(Actor) any
		def   time.Duration
	}{
		{"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS", func(a Actor) any { return a.HealLimits.MinStartupTimeout }, 10 * time.Minute},
		{"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS", func(a Actor) any { return a.HealLimits.MinUnhealthyAfter }, 5 * time.Minute},
	} {
		runActorChecks(t, v.name, v.field, []check{
			{name: v.name + " default", omitted: true, want: v.def},
			{name: v.name + " at the contract's 60 s floor", val: "60", want: time.Minute},
			{name: v.name + " below the 60 s floor", val: "59", bad: "must be from 60 to 86400, got 59"},
			{name: v.name + " zero", val: "0", bad: "must be from 60 to 86400, got 0"},
			{name: v.name + " past a day", val: "86401", bad: "must be from 60 to 86400, got 86401"},
			{name: v.name + " garbage", val: "soon", bad: `"soon" is not a whole number of seconds`},
		})
	}
}
