package desired_test

import (
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/actor/internal/desired"
)

func TestDecode_AuthorizationKeysMatchExactly(t *testing.T) {
	cases := []struct {
		name string
		body string
		want desired.Execution
		arms bool // HealingArmed
	}{
		{name: "a capitalised flag authorizes nothing", body: `{"execution":{"Scaling":true,"UPGRADES":true,"Healing":true},"healing":{"enabled":true}}`},
		{name: "a capitalised block is an unknown key", body: `{"Execution":{"scaling":true}}`},
		{name: "a capitalised enabled does not arm healing", body: `{"execution":{"healing":true},"healing":{"Enabled":true}}`, want: desired.Execution{Healing: true}},
		{name: "exact keys authorize", body: `{"execution":{"scaling":true,"healing":true},"healing":{"enabled":true}}`, want: desired.Execution{Scaling: true, Healing: true}, arms: true},
		{name: "a case variant beside the exact key changes nothing", body: `{"execution":{"scaling":false,"Scaling":true}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := desired.Decode([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if d.Execution != c.want || d.HealingArmed() != c.arms {
				t.Errorf("execution %+v armed %v, want %+v armed %v", d.Execution, d.HealingArmed(), c.want, c.arms)
			}
		})
	}
}

func TestDecode_RepeatedKeyRejectsTheWholeDocument(t *testing.T) {
	for _, body := range []string{
		`{"execution":{"scaling":false,"scaling":true}}`,
		`{"execution":{"scaling":true},"execution":{"scaling":true}}`,
		`{"healing":{"enabled":true,"enabled":false}}`,
		`{"workerPools":[{"name":"a","desiredReplicas":1,"desiredReplicas":0}]}`,
		`{"revision":1,"revision":2}`,
		`{"future":{"deep":[{"k":1,"k":2}]}}`,
	} {
		d, err := desired.Decode([]byte(body))
		if err == nil || !strings.Contains(err.Error(), "repeats a key") {
			t.Errorf("%s: err %v, want a repeated-key rejection", body, err)
		}
		if d.Execution.Scaling || d.Revision != 0 {
			t.Errorf("%s: a rejected document still carries %+v", body, d)
		}
	}
}

// A null reads as the key left out, as the apiserver reads one: a platform
// written in Go sends null for an empty list or a missing block. So a null
// never authorizes, never arms healing and never gives a window.
func TestDecode_NullReadsAsTheKeyLeftOut(t *testing.T) {
	body := `{"revision":null,"kubernetesVersion":null,"workerPools":null,` +
		`"execution":{"scaling":null,"upgrades":null,"healing":null},` +
		`"healing":{"enabled":null,"maxUnhealthy":null,"nodeStartupTimeoutSeconds":null,"unhealthyAfterSeconds":null,"cooldownSeconds":null}}`
	d, err := desired.Decode([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if !reflect.DeepEqual(d, desired.Document{}) {
		t.Errorf("%s: decoded %+v, want the empty document", body, d)
	}
	for _, body := range []string{`{"revision":4,"execution":null,"healing":null}`, `{"revision":4}`} {
		d, err := desired.Decode([]byte(body))
		if err != nil || !reflect.DeepEqual(d, desired.Document{Revision: 4}) {
			t.Errorf("%s: decoded %+v, %v; want revision 4 and nothing else", body, d, err)
		}
	}
}

func TestDecode_SameKeyInSiblingObjectsIsNotARepeat(t *testing.T) {
	body := `{"workerPools":[{"name":"a","desiredReplicas":1},{"name":"b","desiredReplicas":2}],"execution":{"scaling":true},"healing":{"enabled":false}}`
	d, err := desired.Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.WorkerPools) != 2 || !d.Execution.Scaling {
		t.Errorf("decoded %+v", d)
	}
}

func TestDecode_PoolKeysMatchExactly(t *testing.T) {
	d, err := desired.Decode([]byte(`{"workerPools":[{"name":"b","desiredReplicas":3,"Name":"a","DesiredReplicas":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := d.WorkerPools[0]
	if p.Name != "b" || p.DesiredReplicas == nil || *p.DesiredReplicas != 3 {
		t.Errorf("pool %+v, want b with 3 replicas from the exact keys", p)
	}
}
