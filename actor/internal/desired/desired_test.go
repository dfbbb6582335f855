package desired_test

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/actor/internal/desired"
)

func ptr(s string) *string { return &s }

const example = `{
  "revision": 12,
  "kubernetesVersion": "v1.35.6",
  "workerPools": [{"name": "workers-a", "machineType": "cpx31", "desiredReplicas": 3}],
  "execution": {"scaling": true, "upgrades": false, "healing": true},
  "healing": {"enabled": true, "maxUnhealthy": 1, "nodeStartupTimeoutSeconds": 600,
              "unhealthyAfterSeconds": 300, "cooldownSeconds": 900}
}`

func TestDecode_ReadsTheDocument(t *testing.T) {
	cases := []struct {
		name string
		body string
		want desired.Document
	}{
		{
			name: "the contract's example, healing block and flag included",
			body: example,
			want: desired.Document{
				Revision:          12,
				KubernetesVersion: ptr("v1.35.6"),
				WorkerPools:       []desired.Pool{{Name: "workers-a", MachineType: "cpx31", DesiredReplicas: i64(3)}},
				Execution:         desired.Execution{Scaling: true, Healing: true},
				Healing: desired.Healing{Enabled: true, MaxUnhealthy: 1, NodeStartupTimeoutSeconds: 600,
					UnhealthyAfterSeconds: 300, CooldownSeconds: 900},
			},
		},
		{
			name: "a missing healing block is disabled zeros",
			body: `{"revision":3,"kubernetesVersion":null,"workerPools":[],"execution":{"scaling":true,"upgrades":true}}`,
			want: desired.Document{Revision: 3, WorkerPools: []desired.Pool{}, Execution: desired.Execution{Scaling: true, Upgrades: true}},
		},
		{
			name: "missing execution keys are false",
			body: `{"revision":0,"execution":{"healing":true}}`,
			want: desired.Document{Execution: desired.Execution{Healing: true}},
		},
		{name: "null blocks are zeros", body: `{"execution":null,"healing":null,"workerPools":null}`},
		{
			name: "unknown keys are ignored",
			body: `{"revision":5,"tier":"managed","execution":{"scaling":true,"drain":true},"pools":[{"x":1}]}`,
			want: desired.Document{Revision: 5, Execution: desired.Execution{Scaling: true}},
		},
		{name: "absent version is nil", body: `{"revision":1}`, want: desired.Document{Revision: 1}},
		{name: "blank version is nil", body: `{"revision":1,"kubernetesVersion":"  \t"}`, want: desired.Document{Revision: 1}},
		{
			name: "version is trimmed",
			body: `{"revision":1,"kubernetesVersion":" v1.35.6\n"}`,
			want: desired.Document{Revision: 1, KubernetesVersion: ptr("v1.35.6")},
		},
		{
			name: "per-pool nonsense is not a document error",
			body: `{"revision":1,"workerPools":[{"name":"Bad_Name","desiredReplicas":-4},{"desiredReplicas":100000}]}`,
			want: desired.Document{Revision: 1, WorkerPools: []desired.Pool{{Name: "Bad_Name", DesiredReplicas: i64(-4)}, {DesiredReplicas: i64(100000)}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desired.Decode([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecode_RefusesWhatCannotBeActedOn(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string
	}{
		{name: "empty body, as a 204 has", body: "", want: "empty body"},
		{name: "whitespace only", body: " \n", want: "empty body"},
		{name: "null", body: "null", want: "not a JSON object"},
		{name: "a list", body: `[{"revision":1}]`, want: "not a JSON object"},
		{name: "html error page", body: "<html>502</html>", want: "not a JSON object"},
		{name: "truncated", body: `{"revision":12,"execution":{`, want: "decode"},
		{name: "trailing garbage", body: `{"revision":1} {}`, want: "decode"},
		{name: "revision as a string", body: `{"revision":"12"}`, want: "decode"},
		{name: "fractional revision", body: `{"revision":1.5}`, want: "decode"},
		{name: "flag as a string", body: `{"execution":{"scaling":"true"}}`, want: "decode"},
		{name: "negative revision", body: `{"revision":-1}`, want: "revision -1 is negative"},
		{name: "healing out of bounds", body: `{"healing":{"maxUnhealthy":1001}}`, want: "maxUnhealthy 1001"},
		{name: "over 1 MiB", body: `{"revision":1}` + strings.Repeat(" ", 1<<20), want: "exceeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desired.Decode([]byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if !reflect.DeepEqual(got, desired.Document{}) {
				t.Fatalf("a refused body still yields %+v", got)
			}
		})
	}
}

func TestValidate_BoundsHealingAndRevision(t *testing.T) {
	cases := []struct {
		name  string
		tweak func(*desired.Document)
		want  string // "" when valid
	}{
		{name: "all zeros pass", tweak: func(*desired.Document) {}},
		{name: "upper bounds pass", tweak: func(d *desired.Document) {
			d.Revision = 1 << 40
			d.Healing = desired.Healing{MaxUnhealthy: 1000, NodeStartupTimeoutSeconds: 1_000_000,
				UnhealthyAfterSeconds: 1_000_000, CooldownSeconds: 1_000_000}
		}},
		{name: "negative revision", tweak: func(d *desired.Document) { d.Revision = -1 }, want: "revision -1 is negative"},
		{name: "maxUnhealthy below 0", tweak: func(d *desired.Document) { d.Healing.MaxUnhealthy = -1 }, want: "healing.maxUnhealthy -1 is outside 0..1000"},
		{name: "maxUnhealthy above 1000", tweak: func(d *desired.Document) { d.Healing.MaxUnhealthy = 1001 }, want: "healing.maxUnhealthy 1001 is outside 0..1000"},
		{name: "startup below 0", tweak: func(d *desired.Document) { d.Healing.NodeStartupTimeoutSeconds = -1 }, want: "healing.nodeStartupTimeoutSeconds -1"},
		{name: "startup above 1M", tweak: func(d *desired.Document) { d.Healing.NodeStartupTimeoutSeconds = 1_000_001 }, want: "healing.nodeStartupTimeoutSeconds 1000001"},
		{name: "unhealthy below 0", tweak: func(d *desired.Document) { d.Healing.UnhealthyAfterSeconds = -1 }, want: "healing.unhealthyAfterSeconds -1"},
		{name: "unhealthy above 1M", tweak: func(d *desired.Document) { d.Healing.UnhealthyAfterSeconds = 1_000_001 }, want: "healing.unhealthyAfterSeconds 1000001"},
		{name: "cooldown below 0", tweak: func(d *desired.Document) { d.Healing.CooldownSeconds = -1 }, want: "healing.cooldownSeconds -1"},
		{name: "cooldown above 1M", tweak: func(d *desired.Document) { d.Healing.CooldownSeconds = 1_000_001 }, want: "healing.cooldownSeconds 1000001"},
		{
			name: "every violation is named at once",
			tweak: func(d *desired.Document) {
				d.Revision, d.Healing.MaxUnhealthy, d.Healing.CooldownSeconds = -2, 5000, -9
			},
			want: "desired state rejected: revision -2 is negative; healing.maxUnhealthy 5000 is outside 0..1000; " +
				"healing.cooldownSeconds -9 is outside 0..1000000",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d desired.Document
			tc.tweak(&d)
			err := d.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestHealingArmed_NeedsBothTheFlagAndThePolicy(t *testing.T) {
	for _, tc := range []struct {
		flag, enabled, want bool
	}{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true}} {
		d := desired.Document{Execution: desired.Execution{Healing: tc.flag}, Healing: desired.Healing{Enabled: tc.enabled}}
		if got := d.HealingArmed(); got != tc.want {
			t.Errorf("execution.healing=%v healing.enabled=%v: armed %v, want %v", tc.flag, tc.enabled, got, tc.want)
		}
	}
}

func TestDocument_LogValueSaysWhatIsAuthorized(t *testing.T) {
	d, err := desired.Decode([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slog.New(slog.NewJSONHandler(&b, nil)).Info("Desired state", "desired", d)
	want := `"desired":{"revision":12,"pools":1,"scaling":true,"upgrades":false,"healing":true,` +
		`"maxUnhealthy":1,"unhealthyAfterSeconds":300,"cooldownSeconds":900}`
	if !strings.Contains(b.String(), want) {
		t.Fatalf("logged %s\nwant %s", b.String(), want)
	}
}

func i64(n int64) *int64 { return &n }

func TestDecode_MissingOrMalformedReplicasIsThePoolsProblemNotZero(t *testing.T) {
	body := []byte(`{"revision":5,"workerPools":[{"name":"a"},{"name":"b","desiredReplicas":null},{"name":"c","desiredReplicas":"3"},{"name":"d","desiredReplicas":2.5},{"name":"e","desiredReplicas":0}],"execution":{"scaling":true}}`)
	doc, err := desired.Decode(body)
	if err != nil {
		t.Fatalf("a malformed pool count rejected the whole document: %v", err)
	}
	for _, p := range doc.WorkerPools[:4] {
		if p.DesiredReplicas != nil {
			t.Errorf("pool %s: desiredReplicas %d, want unknown (nil), never a guessed 0", p.Name, *p.DesiredReplicas)
		}
	}
	if e := doc.WorkerPools[4].DesiredReplicas; e == nil || *e != 0 {
		t.Errorf("an explicit 0 must stay 0")
	}
}
