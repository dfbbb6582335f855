package inventory

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("bad fixture %s: %v", doc, err)
	}
	return obj
}

func TestSnapshot_MapsSpecFieldForField(t *testing.T) {
	obj := decode(t, `{"spec": {
		"lok8sVersion": "0.9.2", "kind": "managed", "provider": "hetzner",
		"kubernetesVersion": "v1.35.5", "specHash": "sha256:ab12", "renderedAt": "2026-07-06T09:00:00Z",
		"addons": [
			{"name": "cilium", "chartVersion": "1.16.1", "appVersion": "1.16.1", "category": "cni", "source": "addon"},
			{"name": "hcloud-csi", "chartVersion": "2.9.0"},
			{"name": "team-app", "source": "target"}
		]}}`)
	want := &wire.Inventory{
		Lok8sVersion: "0.9.2", Kind: "managed", Provider: "hetzner", KubernetesVersion: "v1.35.5",
		SpecHash: "sha256:ab12", RenderedAt: "2026-07-06T09:00:00Z",
		Addons: []wire.Addon{
			{Name: "cilium", ChartVersion: "1.16.1", AppVersion: "1.16.1", Category: "cni", Source: "addon"},
			{Name: "hcloud-csi", ChartVersion: "2.9.0"},
			{Name: "team-app", Source: "target"},
		},
	}
	if got := snapshotFromObject(obj); !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot\n got %+v\nwant %+v", got, want)
	}
}

func TestSnapshot_MinimalSpecMapsBadAddonsSkippedNoSpecIsNil(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      *wire.Inventory
		wantJSON  string
	}{{
		name:     "minimal spec keeps the four required keys, even empty",
		obj:      `{"spec": {"lok8sVersion": "0.9.2"}}`,
		want:     &wire.Inventory{Lok8sVersion: "0.9.2"},
		wantJSON: `{"lok8sVersion":"0.9.2","kind":"","specHash":"","renderedAt":""}`,
	}, {
		name: "nameless and non-object addons are skipped",
		obj: `{"spec": {"kind": "managed", "addons": [
			{"chartVersion": "1.0"}, {"name": ""}, "cilium", 7, null, ["x"], {"name": "ok"}]}}`,
		want:     &wire.Inventory{Kind: "managed", Addons: []wire.Addon{{Name: "ok"}}},
		wantJSON: `{"lok8sVersion":"","kind":"managed","specHash":"","renderedAt":"","addons":[{"name":"ok"}]}`,
	}, {
		name: "no addon left omits the key",
		obj:  `{"spec": {"kind": "managed", "addons": [{"category": "cni"}]}}`,
		want: &wire.Inventory{Kind: "managed"}, wantJSON: `{"lok8sVersion":"","kind":"managed","specHash":"","renderedAt":""}`,
	}, {
		name: "object with no spec",
		obj:  `{"metadata": {"name": "cluster"}, "status": {"availableUpdates": []}}`,
	}, {
		name: "empty spec",
		obj:  `{"spec": {}}`,
	}, {
		name: "spec with nothing usable",
		obj:  `{"spec": {"lok8sVersion": "", "addons": [], "unknown": "x"}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := snapshotFromObject(decode(t, tc.obj))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("snapshot\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.want == nil {
				return
			}
			b, err := json.Marshal(got)
			if err != nil || string(b) != tc.wantJSON {
				t.Errorf("JSON %s (%v), want %s", b, err, tc.wantJSON)
			}
		})
	}
}

// The CR is untrusted: whatever the apiserver (or a fuzzer) hands back,
// mapping it never panics and wrong types read as absent.
func TestSnapshot_MalformedShapesNeverPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want *wire.Inventory
	}{
		{"nil object", nil, nil},
		{"spec is a string", map[string]any{"spec": "x"}, nil},
		{"spec is a list", map[string]any{"spec": []any{map[string]any{"kind": "k"}}}, nil},
		{"spec is null", map[string]any{"spec": nil}, nil},
		{"spec of the wrong map type", map[string]any{"spec": map[string]string{"kind": "k"}}, nil},
		{"scalars of the wrong type", map[string]any{"spec": map[string]any{
			"lok8sVersion": 1.5, "kind": true, "provider": map[string]any{}, "specHash": []any{"a"}, "renderedAt": nil,
			"kubernetesVersion": "v1.35.5"}}, &wire.Inventory{KubernetesVersion: "v1.35.5"}},
		{"addons is an object", map[string]any{"spec": map[string]any{
			"kind": "k", "addons": map[string]any{"name": "x"}}}, &wire.Inventory{Kind: "k"}},
		{"addons of the wrong slice type", map[string]any{"spec": map[string]any{
			"kind": "k", "addons": []map[string]any{{"name": "x"}}}}, &wire.Inventory{Kind: "k"}},
		{"addon fields of the wrong type", map[string]any{"spec": map[string]any{"addons": []any{
			map[string]any{"name": 3},
			map[string]any{"name": "a", "chartVersion": 1, "appVersion": []any{}, "category": nil, "source": false},
		}}}, &wire.Inventory{Addons: []wire.Addon{{Name: "a"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := snapshotFromObject(tc.obj); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("snapshot\n got %+v\nwant %+v", got, tc.want)
			}
			statusFromObject(tc.obj) // must not panic either
		})
	}
}

func TestStatus_RecordedOnlyWhenAvailableUpdatesIsAList(t *testing.T) {
	for _, tc := range []struct {
		name, obj    string
		wantRecorded bool
		wantBaseline []wire.AvailableUpdate
	}{
		{"no status", `{"spec": {"kind": "k"}}`, false, nil},
		{"status is a string", `{"status": "x"}`, false, nil},
		{"no availableUpdates", `{"status": {"observedAddons": []}}`, false, nil},
		{"availableUpdates is null", `{"status": {"availableUpdates": null}}`, false, nil},
		{"availableUpdates is an object", `{"status": {"availableUpdates": {"name": "a"}}}`, false, nil},
		{"explicit empty list", `{"status": {"availableUpdates": []}}`, true, []wire.AvailableUpdate{}},
		{"bad entries skipped, order kept", `{"status": {"availableUpdates": [
			{"name": "b", "current": "1", "latest": "2"}, {"current": "1"}, "a", null,
			{"name": "a", "current": 5, "latest": "3"}]}}`,
			true, []wire.AvailableUpdate{up("b", "1", "2"), up("a", "", "3")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded, baseline := statusFromObject(decode(t, tc.obj))
			if recorded != tc.wantRecorded || !reflect.DeepEqual(baseline, tc.wantBaseline) {
				t.Errorf("got (%v, %#v), want (%v, %#v)", recorded, baseline, tc.wantRecorded, tc.wantBaseline)
			}
		})
	}
}

func TestCapUpdates_DropsNamelessClampsAndKeeps256(t *testing.T) {
	many := func(n int, every func(i int) wire.AvailableUpdate) []wire.AvailableUpdate {
		out := make([]wire.AvailableUpdate, n)
		for i := range out {
			out[i] = every(i)
		}
		return out
	}
	named := func(i int) wire.AvailableUpdate { return up(fmt.Sprintf("addon-%d", i), "1.0", "") }
	long, emoji := strings.Repeat("x", 300), strings.Repeat("🙂", 130) // 260 UTF-16 units
	for _, tc := range []struct {
		name string
		in   []wire.AvailableUpdate
		want []wire.AvailableUpdate
	}{
		{"nil stays nil", nil, nil},
		{"empty stays empty", []wire.AvailableUpdate{}, []wire.AvailableUpdate{}},
		{"nameless dropped, order kept", []wire.AvailableUpdate{up("", "1", "2"), up("b", "1", "2"), up("a", "", "")},
			[]wire.AvailableUpdate{up("b", "1", "2"), up("a", "", "")}},
		{"name clamped to 253, versions to 64", []wire.AvailableUpdate{up(long, long, long)},
			[]wire.AvailableUpdate{up(long[:253], long[:64], long[:64])}},
		{"clamped by UTF-16 units", []wire.AvailableUpdate{up(emoji, emoji, "")},
			[]wire.AvailableUpdate{up(strings.Repeat("🙂", 126), strings.Repeat("🙂", 32), "")}},
		{"exactly 256 kept", many(256, named), many(256, named)},
		{"the first 256 of 300 kept", many(300, named), many(256, named)},
		{"the first 256 valid ones kept", many(600, func(i int) wire.AvailableUpdate {
			if i%2 == 1 {
				return up("", "", "")
			}
			return named(i / 2)
		}), many(256, named)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := capUpdates(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("capUpdates: got %d entries %v, want %d", len(got), got, len(tc.want))
			}
		})
	}
}
