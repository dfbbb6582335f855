package config

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/token"
)

const goodToken = "khz_agt_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// rawCommonOnly is a binary's raw settings with nothing of its own: the
// common part alone, held as each binary holds it.
type rawCommonOnly struct {
	Common RawCommon
}

// load reads the common settings as each binary's loader does, with Load
// and ParseCommon.
func load(env map[string]string) (Common, error) {
	return Load(context.Background(), envconfig.MapLookuper(env), func(raw rawCommonOnly, p *Problems) Common {
		return ParseCommon(raw.Common, p)
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func defaults(t *testing.T) Common {
	return Common{
		ClusterID:        "c1",
		APIURL:           mustURL(t, "https://api.kubehz.dev"),
		TokenFile:        "/var/run/secrets/kubehz/agent-token",
		Namespace:        "kubehz-system",
		SecretName:       "kubehz-agent",
		MDNamespace:      "kube-system",
		ActionsConfigMap: "kubehz-actions",
		ActorLease:       "kubehz-actor",
		LogLevel:         slog.LevelInfo,
	}
}

func TestParseCommon_Settings(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		tweak func(c *Common)
	}{
		{name: "minimal gets every default and no token", env: testkit.MinimalEnv(), tweak: func(*Common) {}},
		{
			name: "blank values count as unset",
			env: testkit.Env(map[string]string{
				"KUBEHZ_AGENT_TOKEN": " ", "KUBEHZ_NAMESPACE": "", "KUBEHZ_AGENT_TOKEN_FILE": "",
			}),
			tweak: func(*Common) {},
		},
		{
			name: "overrides",
			env: testkit.Env(map[string]string{
				"CLUSTER_ID": "  K8S_lab.example-1.com\n", "KUBEHZ_AGENT_TOKEN": goodToken + "\n",
				"KUBEHZ_AGENT_TOKEN_FILE": "/tok", "KUBEHZ_NAMESPACE": "agents", "KUBEHZ_SECRET_NAME": "id.v2",
				"KUBEHZ_LOG_LEVEL": "DEBUG", "KUBEHZ_MD_NAMESPACE": "machines",
			}),
			tweak: func(c *Common) {
				c.ClusterID, c.AgentToken, c.TokenFile = "K8S_lab.example-1.com", token.Token(goodToken), "/tok"
				c.Namespace, c.SecretName, c.LogLevel = "agents", "id.v2", slog.LevelDebug
				c.MDNamespace = "machines"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := load(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			want := defaults(t)
			tc.tweak(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseCommon_NamesEveryBadVariableAtOnce(t *testing.T) {
	badToken := "khz_agt_" + strings.Repeat("E", 64)
	env := map[string]string{
		"CLUSTER_ID":          "a/b",
		"KUBEHZ_API_URL":      "http://api.kubehz.dev",
		"KUBEHZ_AGENT_TOKEN":  badToken,
		"KUBEHZ_NAMESPACE":    "Kube-System",
		"KUBEHZ_SECRET_NAME":  "Bad_Name",
		"KUBEHZ_MD_NAMESPACE": "kube_system",
	}
	_, err := load(env)
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	var vars []string
	for _, p := range cerr.Problems {
		vars = append(vars, p.Var)
	}
	want := []string{
		"CLUSTER_ID", "KUBEHZ_API_URL", "KUBEHZ_AGENT_TOKEN", "KUBEHZ_NAMESPACE", "KUBEHZ_SECRET_NAME",
		"KUBEHZ_MD_NAMESPACE",
	}
	if !reflect.DeepEqual(vars, want) {
		t.Fatalf("named %v, want %v", vars, want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want)+1 {
		t.Fatalf("want a header and one line per variable, got:\n%s", err)
	}
	if strings.Contains(err.Error(), badToken) {
		t.Fatal("error echoes the token")
	}
}

func TestParseCommon_MissingRequiredIsFatal(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "nothing set", env: map[string]string{}, want: []string{"CLUSTER_ID", "KUBEHZ_API_URL"}},
		{name: "cluster id missing", env: map[string]string{"KUBEHZ_API_URL": "https://x"}, want: []string{"CLUSTER_ID"}},
		{name: "url blank", env: map[string]string{"CLUSTER_ID": "c", "KUBEHZ_API_URL": " "}, want: []string{"KUBEHZ_API_URL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(tc.env)
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("err = %v, want *Error", err)
			}
			want := make([]Problem, 0, len(tc.want))
			for _, v := range tc.want {
				want = append(want, Problem{Var: v, Reason: "is required"})
			}
			if !reflect.DeepEqual(cerr.Problems, want) {
				t.Fatalf("problems = %v, want %v", cerr.Problems, want)
			}
		})
	}
}

func TestCommon_PrintableFormRedactsToken(t *testing.T) {
	cases := []struct {
		name string
		tok  string
		want string
	}{
		{name: "set", tok: goodToken, want: `"agentToken":"khz_agt_***redacted***"`},
		{name: "unset", tok: "", want: `"agentToken":"<unset>"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(testkit.Env(map[string]string{"KUBEHZ_AGENT_TOKEN": tc.tok}))
			if err != nil {
				t.Fatal(err)
			}
			testkit.LogsRedacted(t, c, pastedHex, tc.want, `"mdNamespace":"kube-system"`)
			if strings.Contains(c.AgentToken.String(), goodToken) {
				t.Fatalf("the token prints itself: %s", c.AgentToken)
			}
		})
	}
}

func TestParseCommon_MDNamespaceMustBeADNSLabel(t *testing.T) {
	for _, bad := range []string{"Kube-System", "kube_system", "-x", "a/b", strings.Repeat("a", 64)} {
		t.Run(bad, func(t *testing.T) {
			_, err := load(testkit.Env(map[string]string{"KUBEHZ_MD_NAMESPACE": bad}))
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Var != "KUBEHZ_MD_NAMESPACE" {
				t.Fatalf("err = %v, want exactly KUBEHZ_MD_NAMESPACE named", err)
			}
		})
	}
}

// A namePrefix overlay renames the hand-off objects; the manifests pass the
// new names in, and the defaults are what deploy/actor ships unprefixed.
func TestLoad_HandOffNamesFollowTheManifests(t *testing.T) {
	o, err := load(testkit.MinimalEnv())
	if err != nil {
		t.Fatal(err)
	}
	if o.ActionsConfigMap != report.ConfigMapName || o.ActorLease != report.LeaseName {
		t.Errorf("defaults %q, %q; want the shipped names %q, %q", o.ActionsConfigMap, o.ActorLease, report.ConfigMapName, report.LeaseName)
	}
	o, err = load(testkit.Env(map[string]string{"KUBEHZ_ACTIONS_CONFIGMAP": "team-kubehz-actions", "KUBEHZ_ACTOR_LEASE": "team-kubehz-actor"}))
	if err != nil {
		t.Fatal(err)
	}
	if o.ActionsConfigMap != "team-kubehz-actions" || o.ActorLease != "team-kubehz-actor" {
		t.Errorf("overrides read as %q, %q", o.ActionsConfigMap, o.ActorLease)
	}
	_, err = load(testkit.Env(map[string]string{"KUBEHZ_ACTIONS_CONFIGMAP": "Team_Actions", "KUBEHZ_ACTOR_LEASE": "a/b"}))
	var cerr *Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 2 ||
		cerr.Problems[0].Var != "KUBEHZ_ACTIONS_CONFIGMAP" || cerr.Problems[1].Var != "KUBEHZ_ACTOR_LEASE" {
		t.Fatalf("err = %v, want both names refused", err)
	}
}
