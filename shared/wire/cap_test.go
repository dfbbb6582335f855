package wire_test

import (
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

func TestCap(t *testing.T) {
	const grin = "\U0001F600"
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		in   wire.Payload
		want wire.Payload
	}{
		{
			name: "nil nodes become an empty list",
			in:   wire.Payload{},
			want: wire.Payload{Nodes: []wire.Node{}},
		},
		{
			name: "nodes are sorted by name, stably",
			in: wire.Payload{Nodes: []wire.Node{
				{Name: "c"}, {Name: "a", Roles: "first"}, {Name: "b"}, {Name: "a", Roles: "second"},
			}},
			want: wire.Payload{Nodes: []wire.Node{
				{Name: "a", Roles: "first"}, {Name: "a", Roles: "second"}, {Name: "b"}, {Name: "c"},
			}},
		},
		{
			name: "actions drop empty targets and clamp the rest",
			in: wire.Payload{Actions: []wire.Action{
				{Type: "scale", Target: "", Status: "done"},
				{Type: "heal", Target: long, Status: "failed", Detail: long + long, Revision: 7},
			}},
			want: wire.Payload{Nodes: []wire.Node{}, Actions: []wire.Action{
				{Type: "heal", Target: long[:253], Status: "failed", Detail: (long + long)[:256], Revision: 7},
			}},
		},
		{
			name: "action revision is pinned into 0..10M",
			in: wire.Payload{Actions: []wire.Action{
				{Target: "neg", Revision: -5},
				{Target: "top", Revision: 10_000_000},
				{Target: "over", Revision: 10_000_001},
			}},
			want: wire.Payload{Nodes: []wire.Node{}, Actions: []wire.Action{
				{Target: "neg", Revision: 0},
				{Target: "top", Revision: 10_000_000},
				{Target: "over", Revision: 10_000_000},
			}},
		},
		{
			name: "all-invalid actions become absent",
			in:   wire.Payload{Actions: []wire.Action{{Type: "scale"}, {Type: "heal"}}},
			want: wire.Payload{Nodes: []wire.Node{}},
		},
		{
			name: "an empty action list becomes absent",
			in:   wire.Payload{Actions: []wire.Action{}},
			want: wire.Payload{Nodes: []wire.Node{}},
		},
		{
			name: "a target of one non-BMP rune survives",
			in:   wire.Payload{Actions: []wire.Action{{Target: grin}}},
			want: wire.Payload{Nodes: []wire.Node{}, Actions: []wire.Action{{Target: grin}}},
		},
		{
			name: "machine issues drop empty pool or reason and clamp the rest",
			in: wire.Payload{MachineIssues: []wire.MachineIssue{
				{Pool: "", Reason: "NodeJoinTimeout"},
				{Pool: "workers", Reason: ""},
				{Pool: long, Machine: long, Reason: long, Message: long + long, Since: long},
			}},
			want: wire.Payload{Nodes: []wire.Node{}, MachineIssues: []wire.MachineIssue{
				{Pool: long[:63], Machine: long[:253], Reason: long[:63], Message: (long + long)[:256], Since: long[:64]},
			}},
		},
		{
			name: "all-invalid machine issues become absent",
			in:   wire.Payload{MachineIssues: []wire.MachineIssue{{Machine: "m"}}},
			want: wire.Payload{Nodes: []wire.Node{}},
		},
		{
			name: "inventory is clamped and nameless addons dropped",
			in: wire.Payload{Inventory: &wire.Inventory{
				Lok8sVersion: long, Kind: long, Provider: long, KubernetesVersion: long,
				SpecHash: long, RenderedAt: long,
				Addons: []wire.Addon{
					{Name: ""},
					{Name: long, ChartVersion: long, AppVersion: long, Category: long, Source: long},
				},
			}},
			want: wire.Payload{Nodes: []wire.Node{}, Inventory: &wire.Inventory{
				Lok8sVersion: long[:64], Kind: long[:63], Provider: long[:63], KubernetesVersion: long[:64],
				SpecHash: long[:64], RenderedAt: long[:64],
				Addons: []wire.Addon{
					{Name: long[:253], ChartVersion: long[:64], AppVersion: long[:64], Category: long[:63], Source: long[:63]},
				},
			}},
		},
		{
			name: "byNamespace under the limit is unchanged",
			in:   wire.Payload{Workloads: wire.Workloads{Pods: wire.Pods{Total: 3, ByNamespace: map[string]int{"a": 1, "b": 2}}}},
			want: wire.Payload{Nodes: []wire.Node{}, Workloads: wire.Workloads{Pods: wire.Pods{Total: 3, ByNamespace: map[string]int{"a": 1, "b": 2}}}},
		},
		{
			name: "count-like integers are pinned into 0..10M",
			in: wire.Payload{
				Workloads: wire.Workloads{Pods: wire.Pods{Total: 20_000_000, Unknown: -1}},
				Events:    []wire.Event{{Reason: "BackOff", Kind: "Pod", Count: 2_000_000_000}},
				Pools:     []wire.Pool{{Name: "w", Replicas: -3, Ready: 11_000_000}},
			},
			want: wire.Payload{
				Nodes:     []wire.Node{},
				Workloads: wire.Workloads{Pods: wire.Pods{Total: 10_000_000}},
				Events:    []wire.Event{{Reason: "BackOff", Kind: "Pod", Count: 10_000_000}},
				Pools:     []wire.Pool{{Name: "w", Ready: 10_000_000}},
			},
		},
		{
			name: "pools and certificates are clamped",
			in: wire.Payload{
				Pools:        []wire.Pool{{Name: long, MachineType: long, APIGroup: long}},
				Certificates: &wire.Certificates{ExpiresAt: long},
			},
			want: wire.Payload{
				Nodes:        []wire.Node{},
				Pools:        []wire.Pool{{Name: long[:253], MachineType: long[:64], APIGroup: long[:253]}},
				Certificates: &wire.Certificates{ExpiresAt: long[:64]},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.Cap()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Cap()\n got %+v\nwant %+v", got, tt.want)
			}
			checkBounds(t, &got)
		})
	}
}

// Sorting must follow clamping: "a…aé" < "a…a😀" as raw strings, but clamped
// to 253 units the first keeps its é while the second loses its emoji, which
// reverses their order.
func TestCap_SortsClampedNodeNames(t *testing.T) {
	stem := strings.Repeat("a", 252)
	p := wire.Payload{Nodes: []wire.Node{{Name: stem + "é"}, {Name: stem + "\U0001F600"}}}
	p.Cap()
	want := []wire.Node{{Name: stem}, {Name: stem + "é"}}
	if !reflect.DeepEqual(p.Nodes, want) {
		t.Errorf("nodes = %q, want %q", names(p.Nodes), names(want))
	}
}

func names(nodes []wire.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}
