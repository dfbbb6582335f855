package wire_test

import (
	"encoding/json"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// The key names and which keys go missing are the contract with the
// platform, so these compare whole encodings after Cap.
func TestPayload_WireShape(t *testing.T) {
	meta := func() wire.Payload {
		return wire.Payload{
			Schema: wire.Schema, ClusterID: "demo.example.net", Timestamp: "2026-07-06T09:15:00Z",
			Agent:      wire.Agent{Version: "1.2.3", Mode: wire.ModeOperator},
			Kubernetes: wire.Kubernetes{Version: "v1.35.5"},
		}
	}
	const head = `{"schema":2,"clusterId":"demo.example.net","timestamp":"2026-07-06T09:15:00Z",` +
		`"agent":{"version":"1.2.3","mode":"operator"},"kubernetes":{"version":"v1.35.5"},`
	const pods = `"workloads":{"pods":{"total":0,"running":0,"pending":0,"failed":0,"succeeded":0,"unknown":0}}`

	tests := []struct {
		name string
		edit func(*wire.Payload)
		want string
	}{
		{
			name: "empty payload has nodes [] and no optional keys",
			edit: func(*wire.Payload) {},
			want: head + `"nodes":[],` + pods + `}`,
		},
		{
			name: "node keys",
			edit: func(p *wire.Payload) {
				p.Nodes = []wire.Node{
					{Name: "ctl-a", Status: wire.NodeReady, Ready: true, Roles: "control-plane",
						KubeletVersion: "v1.35.5", Capacity: &wire.Capacity{CPU: "2", Memory: "3900Mi"}},
					{Name: "wrk-b", Status: wire.NodeNotReady, Roles: "worker", InstanceType: "cpx21"},
				}
			},
			want: head + `"nodes":[` +
				`{"name":"ctl-a","status":"Ready","ready":true,"roles":"control-plane","kubeletVersion":"v1.35.5",` +
				`"capacity":{"cpu":"2","memory":"3900Mi"}},` +
				`{"name":"wrk-b","status":"NotReady","ready":false,"roles":"worker","instanceType":"cpx21"}],` + pods + `}`,
		},
		{
			name: "action keys",
			edit: func(p *wire.Payload) {
				p.Actions = []wire.Action{{Type: wire.ActionScale, Target: "workers-a", Status: wire.StatusDone, Detail: "d", Revision: 12}}
			},
			want: head + `"nodes":[],` + pods +
				`,"actions":[{"type":"scale","target":"workers-a","status":"done","detail":"d","revision":12}]}`,
		},
		{
			name: "machine issue without a machine omits the key",
			edit: func(p *wire.Payload) {
				p.MachineIssues = []wire.MachineIssue{{Pool: "workers-a", Reason: "NodeJoinTimeout"}}
			},
			want: head + `"nodes":[],` + pods + `,"machineIssues":[{"pool":"workers-a","reason":"NodeJoinTimeout"}]}`,
		},
		{
			name: "inventory keeps its four required keys even when empty",
			edit: func(p *wire.Payload) { p.Inventory = &wire.Inventory{} },
			want: head + `"nodes":[],` + pods + `,"inventory":{"lok8sVersion":"","kind":"","specHash":"","renderedAt":""}}`,
		},
		{
			name: "inventory keys",
			edit: func(p *wire.Payload) {
				p.Inventory = &wire.Inventory{
					Lok8sVersion: "0.9.0", Kind: "k3s", Provider: "hetzner", KubernetesVersion: "v1.35.5",
					SpecHash: "abc", RenderedAt: "2026-07-06T09:00:00Z",
					Addons: []wire.Addon{{Name: "cilium", ChartVersion: "1.16.1", AppVersion: "1.16.1", Category: "cni", Source: "addon"}},
				}
			},
			want: head + `"nodes":[],` + pods + `,"inventory":{"lok8sVersion":"0.9.0","kind":"k3s","provider":"hetzner",` +
				`"kubernetesVersion":"v1.35.5","specHash":"abc","renderedAt":"2026-07-06T09:00:00Z",` +
				`"addons":[{"name":"cilium","chartVersion":"1.16.1","appVersion":"1.16.1","category":"cni","source":"addon"}]}}`,
		},
		{
			name: "opt-in namespaces and events",
			edit: func(p *wire.Payload) {
				p.Workloads.Pods = wire.Pods{Total: 1, Running: 1, ByNamespace: map[string]int{"default": 1}}
				p.Events = []wire.Event{{Reason: "FailedMount", Kind: "Pod", Count: 2, LastSeen: "2026-07-06T09:14:40Z",
					Namespace: "default", Note: "n"}}
			},
			want: head + `"nodes":[],"workloads":{"pods":{"total":1,"running":1,"pending":0,"failed":0,"succeeded":0,` +
				`"unknown":0,"byNamespace":{"default":1}}},"events":[{"reason":"FailedMount","kind":"Pod","count":2,` +
				`"lastSeen":"2026-07-06T09:14:40Z","namespace":"default","note":"n"}]}`,
		},
		{
			name: "empty lists and maps send no key",
			edit: func(p *wire.Payload) {
				p.Nodes = []wire.Node{}
				p.Components, p.Events, p.Pools = []wire.Component{}, []wire.Event{}, []wire.Pool{}
				p.Actions, p.MachineIssues = []wire.Action{}, []wire.MachineIssue{}
				p.Workloads.Pods.ByNamespace = map[string]int{}
			},
			want: head + `"nodes":[],` + pods + `}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := meta()
			tt.edit(&p)
			p.Cap()
			got, err := json.Marshal(&p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
