package beat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

// now is deliberately off UTC and off the whole second: the wire wants both
// normalised away.
var now = time.Date(2026, 7, 6, 14, 15, 0, 750_000_000, time.FixedZone("CEST", 2*60*60))

const nowWire = "2026-07-06T12:15:00Z"

func warning(ns, name string, lastSeen time.Time) *cluster.Event {
	return &cluster.Event{
		Namespace: ns, Name: name, Reason: "FailedMount", Kind: "Pod",
		Message: "volume secret-x not found", Warning: true, Count: 2, LastSeen: lastSeen,
	}
}

func TestBuild_FullSnapshot(t *testing.T) {
	in := Input{
		ClusterID:         "demo.example.net",
		AgentVersion:      "1.2.3",
		KubernetesVersion: "v1.35.5",
		Now:               now,
		Nodes: []*cluster.Node{
			{Name: "wrk-b", Status: "NotReady", Roles: "worker", InstanceType: "cpx21"},
			{Name: "ctl-a", Status: "Ready", Ready: true, Roles: "control-plane",
				KubeletVersion: "v1.35.5", CPU: "2", Memory: "3900Mi"},
		},
		Pods: wire.Pods{Total: 3, Running: 1, Pending: 1, Succeeded: 1,
			ByNamespace: map[string]int{"shop": 2, "kube-system": 1}},
		Events: []*cluster.Event{warning("shop", "web-0.17f", now.Add(-20*time.Second))},
	}
	want := wire.Payload{
		Schema:     2,
		ClusterID:  "demo.example.net",
		Timestamp:  nowWire,
		Agent:      wire.Agent{Version: "1.2.3", Mode: "operator"},
		Kubernetes: wire.Kubernetes{Version: "v1.35.5"},
		Nodes: []wire.Node{
			{Name: "ctl-a", Status: "Ready", Ready: true, Roles: "control-plane",
				KubeletVersion: "v1.35.5", Capacity: &wire.Capacity{CPU: "2", Memory: "3900Mi"}},
			{Name: "wrk-b", Status: "NotReady", Roles: "worker", InstanceType: "cpx21"},
		},
		Workloads: wire.Workloads{Pods: wire.Pods{Total: 3, Running: 1, Pending: 1, Succeeded: 1}},
		Events:    []wire.Event{{Reason: "FailedMount", Kind: "Pod", Count: 2, LastSeen: "2026-07-06T12:14:40Z"}},
	}
	got := Build(in) // the wire order of nodes is the cap pass's (docs/contract.md#g-4)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Build =\n%+v\nwant\n%+v", got, want)
	}
	const wantJSON = `{"schema":2,"clusterId":"demo.example.net","timestamp":"2026-07-06T12:15:00Z",` +
		`"agent":{"version":"1.2.3","mode":"operator"},"kubernetes":{"version":"v1.35.5"},` +
		`"nodes":[{"name":"ctl-a","status":"Ready","ready":true,"roles":"control-plane","kubeletVersion":"v1.35.5",` +
		`"capacity":{"cpu":"2","memory":"3900Mi"}},` +
		`{"name":"wrk-b","status":"NotReady","ready":false,"roles":"worker","instanceType":"cpx21"}],` +
		`"workloads":{"pods":{"total":3,"running":1,"pending":1,"failed":0,"succeeded":1,"unknown":0}},` +
		`"events":[{"reason":"FailedMount","kind":"Pod","count":2,"lastSeen":"2026-07-06T12:14:40Z"}]}`
	if j := marshal(t, got); j != wantJSON {
		t.Errorf("JSON =\n%s\nwant\n%s", j, wantJSON)
	}
}

func TestBuild_NoNodesMarshalAsEmptyList(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*cluster.Node
	}{
		{"nil node list (a failed read)", nil},
		{"empty node list", []*cluster.Node{}},
		{"only nil records", []*cluster.Node{nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(Input{
				Now:   now,
				Nodes: tt.nodes,
				Pods:  wire.Pods{Total: 1, Running: 1},
			})
			j := marshal(t, got)
			if !strings.Contains(j, `"nodes":[]`) {
				t.Errorf("JSON has no empty nodes list: %s", j)
			}
			if want := (wire.Pods{Total: 1, Running: 1}); !reflect.DeepEqual(got.Workloads.Pods, want) {
				t.Errorf("pods = %+v, want %+v", got.Workloads.Pods, want)
			}
		})
	}
}

// The wire order comes from the cap pass, which sorts after clamping
// (docs/contract.md#g-4), which Build runs last.
func TestBuild_NodesSortedByNameAndMapped(t *testing.T) {
	tests := []struct {
		name string
		in   []*cluster.Node
		want []wire.Node
	}{
		{
			name: "lister order does not leak to the wire",
			in: []*cluster.Node{
				{Name: "wrk-c", Status: "Ready", Ready: true, Roles: "worker"},
				{Name: "ctl-a", Status: "Ready", Ready: true, Roles: "control-plane"},
				nil,
				{Name: "wrk-b", Status: "Unknown", Roles: "worker"},
			},
			want: []wire.Node{
				{Name: "ctl-a", Status: "Ready", Ready: true, Roles: "control-plane"},
				{Name: "wrk-b", Status: "Unknown", Roles: "worker"},
				{Name: "wrk-c", Status: "Ready", Ready: true, Roles: "worker"},
			},
		},
		{
			name: "capacity with only memory keeps only memory",
			in:   []*cluster.Node{{Name: "wrk-d", Status: "Ready", Ready: true, Roles: "worker", Memory: "8148Mi"}},
			want: []wire.Node{{Name: "wrk-d", Status: "Ready", Ready: true, Roles: "worker",
				Capacity: &wire.Capacity{Memory: "8148Mi"}}},
		},
		{
			name: "cloud node carries instance type, kubelet version and capacity",
			in: []*cluster.Node{{Name: "wrk-e", Status: "Ready", Ready: true, Roles: "worker",
				InstanceType: "cpx21", KubeletVersion: "v1.35.5", CPU: "4", Memory: "8148Mi"}},
			want: []wire.Node{{Name: "wrk-e", Status: "Ready", Ready: true, Roles: "worker",
				InstanceType: "cpx21", KubeletVersion: "v1.35.5", Capacity: &wire.Capacity{CPU: "4", Memory: "8148Mi"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Build(Input{Now: now, Nodes: tt.in}).Nodes; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("nodes =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestBuild_WarningEventsNewestFirst(t *testing.T) {
	normal := warning("shop", "web-0.zzz", now)
	normal.Reason = "Pulled"
	normal.Warning = false
	entry := func(reason string, lastSeen time.Time) wire.Event {
		return wire.Event{Reason: reason, Kind: "Pod", Count: 2, LastSeen: Timestamp(lastSeen)}
	}
	named := func(name string, lastSeen time.Time) *cluster.Event {
		e := warning("shop", name, lastSeen)
		e.Reason = name // so the order is visible on the wire
		return e
	}
	tests := []struct {
		name   string
		events []*cluster.Event
		want   []wire.Event
	}{
		{
			name:   "Normal events and nil entries are dropped",
			events: []*cluster.Event{nil, normal, named("a", now)},
			want:   []wire.Event{entry("a", now)},
		},
		{
			name:   "only Normal events give no events key",
			events: []*cluster.Event{normal},
			want:   nil,
		},
		{
			name:   "no events give no events key",
			events: nil,
			want:   nil,
		},
		{
			name: "newest first",
			events: []*cluster.Event{
				named("old", now.Add(-time.Hour)),
				named("new", now),
				named("mid", now.Add(-time.Minute)),
			},
			want: []wire.Event{
				entry("new", now), entry("mid", now.Add(-time.Minute)), entry("old", now.Add(-time.Hour)),
			},
		},
		{
			name: "equal times break by name descending",
			events: []*cluster.Event{
				named("b", now), named("c", now), named("a", now),
			},
			want: []wire.Event{entry("c", now), entry("b", now), entry("a", now)},
		},
		{
			name: "sub-second differences still order, though the wire shows whole seconds",
			events: []*cluster.Event{
				named("a", now.Truncate(time.Second)),
				named("b", now.Truncate(time.Second).Add(-time.Millisecond)),
			},
			want: []wire.Event{entry("a", now), entry("b", now.Add(-time.Second))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Build(Input{Now: now, Events: tt.events}).Events; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestBuild_KeepsExactlyTheTwentyNewestEvents(t *testing.T) {
	// series returns n Warning events one second apart, the newest last, so
	// a collector that truncated before sorting would keep the oldest.
	series := func(n int) []*cluster.Event {
		out := make([]*cluster.Event, 0, n)
		for i := range n {
			e := warning("shop", fmt.Sprintf("ev-%02d", i), now.Add(time.Duration(i-n)*time.Second))
			e.Reason = e.Name
			out = append(out, e)
		}
		return out
	}
	tests := []struct {
		name      string
		events    []*cluster.Event
		wantFirst string
		wantLast  string
		wantLen   int
	}{
		{"19 are all kept", series(19), "ev-18", "ev-00", 19},
		{"exactly 20 are all kept", series(20), "ev-19", "ev-00", 20},
		{"21 lose the oldest", series(21), "ev-20", "ev-01", 20},
		{"50 keep the newest 20", series(50), "ev-49", "ev-30", 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(Input{Now: now, Events: tt.events}).Events
			if len(got) != tt.wantLen || got[0].Reason != tt.wantFirst || got[len(got)-1].Reason != tt.wantLast {
				t.Errorf("got %d events %s..%s, want %d events %s..%s", len(got),
					got[0].Reason, got[len(got)-1].Reason, tt.wantLen, tt.wantFirst, tt.wantLast)
			}
		})
	}
}

func TestBuild_PrivacyGateControlsNamespacesAndNotes(t *testing.T) {
	in := Input{
		Now:    now,
		Nodes:  []*cluster.Node{{Name: "wrk-b", Status: "Ready", Ready: true, Roles: "worker"}},
		Pods:   wire.Pods{Total: 1, Running: 1, ByNamespace: map[string]int{"shop": 1}},
		Events: []*cluster.Event{warning("shop", "web-0.17f", now)},
	}
	tests := []struct {
		name             string
		reportNamespaces bool
		wantPods         string
		wantEvents       string
	}{
		{
			name:       "gate off sends no byNamespace, namespace or note",
			wantPods:   `{"total":1,"running":1,"pending":0,"failed":0,"succeeded":0,"unknown":0}`,
			wantEvents: `[{"reason":"FailedMount","kind":"Pod","count":2,"lastSeen":"2026-07-06T12:15:00Z"}]`,
		},
		{
			name:             "gate on sends byNamespace, namespace and note",
			reportNamespaces: true,
			wantPods: `{"total":1,"running":1,"pending":0,"failed":0,"succeeded":0,"unknown":0,` +
				`"byNamespace":{"shop":1}}`,
			wantEvents: `[{"reason":"FailedMount","kind":"Pod","count":2,"lastSeen":"2026-07-06T12:15:00Z",` +
				`"namespace":"shop","note":"volume secret-x not found"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in.ReportNamespaces = tt.reportNamespaces
			var got struct {
				Workloads struct{ Pods json.RawMessage }
				Events    json.RawMessage
			}
			if err := json.Unmarshal([]byte(marshal(t, Build(in))), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Workloads.Pods) != tt.wantPods {
				t.Errorf("pods JSON = %s, want %s", got.Workloads.Pods, tt.wantPods)
			}
			if string(got.Events) != tt.wantEvents {
				t.Errorf("events JSON = %s, want %s", got.Events, tt.wantEvents)
			}
		})
	}
}

// The sources that hand over wire shapes reach the beat through Build too,
// under the same cap pass as the records Build maps itself.
func TestBuild_CarriesTheOtherSourcesCapped(t *testing.T) {
	in := Input{
		Now: now,
		Actions: []wire.Action{
			{Type: "scale", Target: "workers-a", Status: "done", Revision: 7},
			{Type: "scale", Target: "", Status: "done", Revision: 7},
		},
		Inventory: &wire.Inventory{Lok8sVersion: "0.9.0", Kind: "lok8s", SpecHash: "abc", RenderedAt: nowWire,
			Addons: []wire.Addon{{Name: "cilium"}, {Name: ""}}},
		MachineIssues: []wire.MachineIssue{{Pool: "workers-a", Reason: "CreateFailed"}, {Pool: "", Reason: "CreateFailed"}},
		Pools:         []wire.Pool{{Name: "workers-a", Replicas: 3, Ready: 2}},
		Components:    []wire.Component{{Name: "etcd", Status: "Healthy"}},
		Certificates:  &wire.Certificates{ExpiresAt: nowWire},
	}
	const want = `"components":[{"name":"etcd","status":"Healthy"}],` +
		`"workloads":{"pods":{"total":0,"running":0,"pending":0,"failed":0,"succeeded":0,"unknown":0}},` +
		`"actions":[{"type":"scale","target":"workers-a","status":"done","revision":7}],` +
		`"machineIssues":[{"pool":"workers-a","reason":"CreateFailed"}],` +
		`"inventory":{"lok8sVersion":"0.9.0","kind":"lok8s","specHash":"abc","renderedAt":"2026-07-06T12:15:00Z",` +
		`"addons":[{"name":"cilium"}]},` +
		`"pools":[{"name":"workers-a","replicas":3,"ready":2}],` +
		`"certificates":{"expiresAt":"2026-07-06T12:15:00Z"}}`
	if j := marshal(t, Build(in)); !strings.HasSuffix(j, want) {
		t.Errorf("JSON =\n%s\nwant it to end with\n%s", j, want)
	}
	if got := Build(Input{Now: now, Actions: []wire.Action{}}).Actions; got != nil {
		t.Errorf("an empty action list = %#v, want no key (nil)", got)
	}
}

func TestTimestamp_UTCWholeSecondsZSuffix(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"offset zone is converted to UTC", now, nowWire},
		{"fraction is truncated, not rounded", time.Date(2026, 7, 6, 12, 0, 0, 999_999_999, time.UTC), "2026-07-06T12:00:00Z"},
		{"exactly on the second is unchanged", time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC), "2026-07-06T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Timestamp(tt.in); got != tt.want {
				t.Errorf("Timestamp = %q, want %q", got, tt.want)
			}
		})
	}
}

func marshal(t *testing.T, p wire.Payload) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
