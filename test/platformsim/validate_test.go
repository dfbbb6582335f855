package platformsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func ascii(n int) string { return strings.Repeat("a", n) }

// emoji is outside the BMP: one code point, two UTF-16 code units.
const emoji = "\U0001F600"

func TestHeartbeat_RejectsWhatThePlatformRejects(t *testing.T) {
	h := start(t, Options{})
	cases := []struct {
		name   string
		mutate func(map[string]any) map[string]any
		field  string
	}{
		{"schema missing", func(m map[string]any) map[string]any { return del(m, "schema") }, "schema"},
		{"schema 3", func(m map[string]any) map[string]any { return set(m, "schema", 3) }, "schema"},
		{"schema as string", func(m map[string]any) map[string]any { return set(m, "schema", "2") }, "schema"},
		{"clusterId 254 units", func(m map[string]any) map[string]any { return set(m, "clusterId", ascii(254)) }, "clusterId"},
		{"clusterId 127 non-BMP code points", func(m map[string]any) map[string]any {
			return set(m, "clusterId", strings.Repeat(emoji, 127))
		}, "clusterId"},
		{"clusterId not a string", func(m map[string]any) map[string]any { return set(m, "clusterId", 7) }, "clusterId"},
		{"timestamp 65", func(m map[string]any) map[string]any { return set(m, "timestamp", ascii(65)) }, "timestamp"},
		{"agent missing", func(m map[string]any) map[string]any { return del(m, "agent") }, "agent"},
		{"agent.version 65", func(m map[string]any) map[string]any { return set(m, "agent.version", ascii(65)) }, "agent.version"},
		{"agent.mode unknown", func(m map[string]any) map[string]any { return set(m, "agent.mode", "daemon") }, "agent.mode"},
		{"kubernetes.version 65", func(m map[string]any) map[string]any { return set(m, "kubernetes.version", ascii(65)) }, "kubernetes.version"},
		{"kubernetes.version null", func(m map[string]any) map[string]any { return set(m, "kubernetes.version", nil) }, "kubernetes.version"},
		{"nodes null", func(m map[string]any) map[string]any { return set(m, "nodes", nil) }, "nodes"},
		{"nodes missing", func(m map[string]any) map[string]any { return del(m, "nodes") }, "nodes"},
		{"nodes an object", func(m map[string]any) map[string]any { return set(m, "nodes", map[string]any{}) }, "nodes"},
		{"501 nodes", func(m map[string]any) map[string]any { return repeat(m, "nodes", 501) }, "nodes"},
		{"node name 254", func(m map[string]any) map[string]any { return set(m, "nodes.0.name", ascii(254)) }, "nodes.0.name"},
		{"node status unknown", func(m map[string]any) map[string]any { return set(m, "nodes.1.status", "ready") }, "nodes.1.status"},
		{"node ready not bool", func(m map[string]any) map[string]any { return set(m, "nodes.0.ready", "true") }, "nodes.0.ready"},
		{"node roles 254", func(m map[string]any) map[string]any { return set(m, "nodes.0.roles", ascii(254)) }, "nodes.0.roles"},
		{"node instanceType 65", func(m map[string]any) map[string]any { return set(m, "nodes.1.instanceType", ascii(65)) }, "nodes.1.instanceType"},
		{"node kubeletVersion 65", func(m map[string]any) map[string]any { return set(m, "nodes.0.kubeletVersion", ascii(65)) }, "nodes.0.kubeletVersion"},
		{"51 components", func(m map[string]any) map[string]any { return repeat(m, "components", 51) }, "components"},
		{"component name 254", func(m map[string]any) map[string]any { return set(m, "components.0.name", ascii(254)) }, "components.0.name"},
		{"component status 64", func(m map[string]any) map[string]any { return set(m, "components.0.status", ascii(64)) }, "components.0.status"},
		{"pods total negative", func(m map[string]any) map[string]any { return set(m, "workloads.pods.total", -1) }, "workloads.pods.total"},
		{"pods running fractional", func(m map[string]any) map[string]any { return set(m, "workloads.pods.running", 1.5) }, "workloads.pods.running"},
		{"pods pending over 10M", func(m map[string]any) map[string]any { return set(m, "workloads.pods.pending", 10_000_001) }, "workloads.pods.pending"},
		{"pods failed missing", func(m map[string]any) map[string]any { return del(m, "workloads.pods.failed") }, "workloads.pods.failed"},
		{"byNamespace negative", func(m map[string]any) map[string]any { return set(m, "workloads.pods.byNamespace.default", -1) }, "workloads.pods.byNamespace.default"},
		{"byNamespace over 10M", func(m map[string]any) map[string]any { return set(m, "workloads.pods.byNamespace.default", 1e8) }, "workloads.pods.byNamespace.default"},
		{"events null", func(m map[string]any) map[string]any { return set(m, "events", nil) }, "events"},
		{"51 events", func(m map[string]any) map[string]any { return repeat(m, "events", 51) }, "events"},
		{"event reason 64", func(m map[string]any) map[string]any { return set(m, "events.0.reason", ascii(64)) }, "events.0.reason"},
		{"event kind 64", func(m map[string]any) map[string]any { return set(m, "events.0.kind", ascii(64)) }, "events.0.kind"},
		{"event namespace 254", func(m map[string]any) map[string]any { return set(m, "events.0.namespace", ascii(254)) }, "events.0.namespace"},
		{"event note 257", func(m map[string]any) map[string]any { return set(m, "events.0.note", ascii(257)) }, "events.0.note"},
		{"event count fractional", func(m map[string]any) map[string]any { return set(m, "events.0.count", 2.5) }, "events.0.count"},
		{"event lastSeen missing", func(m map[string]any) map[string]any { return del(m, "events.0.lastSeen") }, "events.0.lastSeen"},
		{"event lastSeen null", func(m map[string]any) map[string]any { return set(m, "events.0.lastSeen", nil) }, "events.0.lastSeen"},
		{"event lastSeen 65", func(m map[string]any) map[string]any { return set(m, "events.0.lastSeen", ascii(65)) }, "events.0.lastSeen"},
		{"21 actions", func(m map[string]any) map[string]any { return repeat(m, "actions", 21) }, "actions"},
		{"action type unknown", func(m map[string]any) map[string]any { return set(m, "actions.0.type", "resize") }, "actions.0.type"},
		{"action status unknown", func(m map[string]any) map[string]any { return set(m, "actions.0.status", "running") }, "actions.0.status"},
		{"action target empty", func(m map[string]any) map[string]any { return set(m, "actions.0.target", "") }, "actions.0.target"},
		{"action target 254", func(m map[string]any) map[string]any { return set(m, "actions.0.target", ascii(254)) }, "actions.0.target"},
		{"action detail 257", func(m map[string]any) map[string]any { return set(m, "actions.0.detail", ascii(257)) }, "actions.0.detail"},
		{"action revision negative", func(m map[string]any) map[string]any { return set(m, "actions.0.revision", -1) }, "actions.0.revision"},
		{"action revision over 10M", func(m map[string]any) map[string]any { return set(m, "actions.0.revision", 10_000_001) }, "actions.0.revision"},
		{"action revision fractional", func(m map[string]any) map[string]any { return set(m, "actions.0.revision", 7.5) }, "actions.0.revision"},
		{"actions null", func(m map[string]any) map[string]any { return set(m, "actions", nil) }, "actions"},
		{"21 machineIssues", func(m map[string]any) map[string]any { return repeat(m, "machineIssues", 21) }, "machineIssues"},
		{"issue pool empty", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.pool", "") }, "machineIssues.0.pool"},
		{"issue pool 64", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.pool", ascii(64)) }, "machineIssues.0.pool"},
		{"issue reason empty", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.reason", "") }, "machineIssues.0.reason"},
		{"issue reason 64", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.reason", ascii(64)) }, "machineIssues.0.reason"},
		{"issue machine empty", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.machine", "") }, "machineIssues.0.machine"},
		{"issue machine 254", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.machine", ascii(254)) }, "machineIssues.0.machine"},
		{"issue message 257", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.message", ascii(257)) }, "machineIssues.0.message"},
		{"issue since 65", func(m map[string]any) map[string]any { return set(m, "machineIssues.0.since", ascii(65)) }, "machineIssues.0.since"},
		{"101 addons", func(m map[string]any) map[string]any { return repeat(m, "inventory.addons", 101) }, "inventory.addons"},
		{"addon name 254", func(m map[string]any) map[string]any { return set(m, "inventory.addons.0.name", ascii(254)) }, "inventory.addons.0.name"},
		{"addon chartVersion 65", func(m map[string]any) map[string]any { return set(m, "inventory.addons.0.chartVersion", ascii(65)) }, "inventory.addons.0.chartVersion"},
		{"addon appVersion 65", func(m map[string]any) map[string]any { return set(m, "inventory.addons.0.appVersion", ascii(65)) }, "inventory.addons.0.appVersion"},
		{"addon category 64", func(m map[string]any) map[string]any { return set(m, "inventory.addons.0.category", ascii(64)) }, "inventory.addons.0.category"},
		{"addon source 64", func(m map[string]any) map[string]any { return set(m, "inventory.addons.0.source", ascii(64)) }, "inventory.addons.0.source"},
		{"inventory lok8sVersion 65", func(m map[string]any) map[string]any { return set(m, "inventory.lok8sVersion", ascii(65)) }, "inventory.lok8sVersion"},
		{"inventory kind 64", func(m map[string]any) map[string]any { return set(m, "inventory.kind", ascii(64)) }, "inventory.kind"},
		{"inventory provider 64", func(m map[string]any) map[string]any { return set(m, "inventory.provider", ascii(64)) }, "inventory.provider"},
		{"inventory kubernetesVersion 65", func(m map[string]any) map[string]any { return set(m, "inventory.kubernetesVersion", ascii(65)) }, "inventory.kubernetesVersion"},
		{"inventory specHash 65", func(m map[string]any) map[string]any { return set(m, "inventory.specHash", ascii(65)) }, "inventory.specHash"},
		{"inventory renderedAt 65", func(m map[string]any) map[string]any { return set(m, "inventory.renderedAt", ascii(65)) }, "inventory.renderedAt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := h.beat(tc.mutate(validBeat()))
			if got.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", got.status, got.body)
			}
			var verdict struct {
				Field  string  `json:"field"`
				Issues []Issue `json:"issues"`
			}
			if err := json.Unmarshal(got.body, &verdict); err != nil {
				t.Fatalf("error body %q: %v", got.body, err)
			}
			var paths []string
			for _, issue := range verdict.Issues {
				paths = append(paths, issue.Path)
			}
			if verdict.Field != tc.field || !slices.Equal(paths, []string{tc.field}) {
				t.Errorf("field %q, issues %+v; want exactly %q", verdict.Field, verdict.Issues, tc.field)
			}
		})
	}
	if n := len(h.sim.Beats()); n != 0 {
		t.Errorf("%d rejected beats counted as accepted", n)
	}
}

func TestHeartbeat_AcceptsEveryBound(t *testing.T) {
	// 126 emoji and one ASCII letter: 253 UTF-16 units, 127 code points.
	id253 := strings.Repeat(emoji, 126) + "a"
	if utf8.RuneCountInString(id253) != 127 {
		t.Fatal("bad fixture")
	}
	h := start(t, Options{})
	cases := []struct {
		name   string
		mutate func(map[string]any) map[string]any
	}{
		{"full valid beat", func(m map[string]any) map[string]any { return m }},
		{"schema 2.0", func(m map[string]any) map[string]any { return set(m, "schema", json.Number("2.0")) }},
		{"clusterId at 253 units", func(m map[string]any) map[string]any { return set(m, "clusterId", id253) }},
		{"minimal beat", func(m map[string]any) map[string]any {
			for _, k := range []string{"components", "events", "actions", "machineIssues", "inventory"} {
				del(m, k)
			}
			return set(set(m, "nodes", []any{}), "kubernetes.version", "")
		}},
		{"cronjob mode", func(m map[string]any) map[string]any { return set(m, "agent.mode", "cronjob") }},
		{"500 nodes", func(m map[string]any) map[string]any { return repeat(m, "nodes", 500) }},
		{"20 actions", func(m map[string]any) map[string]any { return repeat(m, "actions", 20) }},
		{"20 machineIssues", func(m map[string]any) map[string]any { return repeat(m, "machineIssues", 20) }},
		{"50 events", func(m map[string]any) map[string]any { return repeat(m, "events", 50) }},
		{"100 addons", func(m map[string]any) map[string]any { return repeat(m, "inventory.addons", 100) }},
		{"revision 10M", func(m map[string]any) map[string]any { return set(m, "actions.0.revision", 1e7) }},
		{"note 256 units", func(m map[string]any) map[string]any { return set(m, "events.0.note", strings.Repeat(emoji, 128)) }},
		{"machine absent", func(m map[string]any) map[string]any { return del(m, "machineIssues.0.machine") }},
		{"zero counters", func(m map[string]any) map[string]any { return set(m, "events.0.count", 0) }},
		{"event lastSeen 64 units", func(m map[string]any) map[string]any { return set(m, "events.0.lastSeen", strings.Repeat(emoji, 32)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.beat(tc.mutate(validBeat())); got.status != http.StatusOK {
				t.Errorf("status %d, body %s; want 200", got.status, got.body)
			}
		})
	}
	if n := len(h.sim.Beats()); n != len(cases) {
		t.Errorf("%d accepted beats recorded, want %d", n, len(cases))
	}
}

func TestHeartbeat_Schema1OnlyWhenAllowed(t *testing.T) {
	h := start(t, Options{AllowSchema1: true})
	bash := map[string]any{"nodes": []any{}, "components": []any{map[string]any{"name": "etcd", "status": "ok"}}}
	if got := h.beat(bash); got.status != http.StatusOK {
		t.Errorf("schema-1 beat: status %d, body %s; want 200", got.status, got.body)
	}
	if got := h.beat(set(bash, "schema", 1)); got.status != http.StatusOK {
		t.Errorf("explicit schema 1: status %d; want 200", got.status)
	}
	if got := h.beat(del(validBeat(), "clusterId")); got.status != http.StatusBadRequest {
		t.Errorf("schema 2 without clusterId: status %d; want 400", got.status)
	}
	if got := h.beat(map[string]any{"nodes": nil}); got.status != http.StatusBadRequest {
		t.Errorf("schema-1 nodes null: status %d; want 400", got.status)
	}
}

func TestHeartbeat_ListsEveryIssueInSchemaOrder(t *testing.T) {
	m := set(set(validBeat(), "nodes", nil), "actions.0.target", "")
	got := validateHeartbeat(set(m, "timestamp", json.Number("1")), false)
	want := []Issue{
		{Path: "timestamp", Message: "expected string, got number"},
		{Path: "nodes", Message: "expected array, got null"},
		{Path: "actions.0.target", Message: "shorter than 1 UTF-16 code units (0)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("issues\n got %+v\nwant %+v", got, want)
	}
}
