package desired_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/actor/internal/desired"
)

// FuzzDecode: whatever the platform (or something in its place) answers,
// Decode never panics, an accepted document is valid, and re-encoding an
// accepted document decodes to the same document.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		example, "", "null", "{}", "[]", `{"revision":-1}`, `{"kubernetesVersion":"  "}`,
		`{"healing":{"maxUnhealthy":1001,"cooldownSeconds":-1}}`, `{"revision":1e2}`,
		`{"workerPools":[null,{"name":"a","desiredReplicas":-1}],"execution":{"healing":true},"healing":{"enabled":true}}`,
		`{"execution":{"Scaling":true,"scaling":false}}`, `{"execution":{"scaling":false,"scaling":true}}`,
		`{"Execution":{"upgrades":true}}`, `{"healing":{"ENABLED":true},"execution":{"healing":true}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := desired.Decode(body)
		if err != nil {
			if !reflect.DeepEqual(d, desired.Document{}) {
				t.Fatalf("error %v with a non-zero document %+v", err, d)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("Decode accepted an invalid document: %v", err)
		}
		assertExactAuthorization(t, body, d)
		if v := d.KubernetesVersion; v != nil && (*v == "" || strings.TrimSpace(*v) != *v) {
			t.Fatalf("version %q is blank or untrimmed", *v)
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := desired.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded document refused: %v", err)
		}
		if !reflect.DeepEqual(d2, d) {
			t.Fatalf("round trip changed the document\n got %+v\nwant %+v", d2, d)
		}
	})
}

// assertExactAuthorization: an accepted document authorizes a capability
// only when the exact key holds true. A generic map decode keeps keys as
// written, and Decode has already refused any repeated key, so the map is an
// independent reading of the same document.
func assertExactAuthorization(t *testing.T, body []byte, d desired.Document) {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(body), &top); err != nil {
		t.Fatalf("Decode accepted what a map decode refuses: %v", err)
	}
	flag := func(block, key string) bool {
		m, _ := top[block].(map[string]any)
		v, _ := m[key].(bool)
		return v
	}
	got := [4]bool{d.Execution.Scaling, d.Execution.Upgrades, d.Execution.Healing, d.Healing.Enabled}
	want := [4]bool{flag("execution", "scaling"), flag("execution", "upgrades"), flag("execution", "healing"), flag("healing", "enabled")}
	if got != want {
		t.Fatalf("authorization %v, want %v from the exact keys", got, want)
	}
}
