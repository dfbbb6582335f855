package cluster

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// machineObject is a Machine as the dynamic client decodes machine-controller's
// JSON, with every field machineFrom reads set.
func machineObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "Machine",
		"metadata": map[string]any{
			"namespace": testNamespace, "name": name, "resourceVersion": "41", "uid": "uid-" + name,
			"labels":            map[string]any{"pool": "pool-a"},
			"creationTimestamp": "2026-12-01T10:00:00Z",
			"ownerReferences": []any{
				map[string]any{"apiVersion": "cluster.k8s.io/v1alpha1", "kind": "MachineSet", "name": "pool-a-5d8f", "uid": "ms"},
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "not-a-pool", "uid": "cm"},
			},
		},
		"spec": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"team": "web"}},
			"versions": map[string]any{"kubelet": "v1.35.6"},
		},
		"status": map[string]any{"nodeRef": map[string]any{"name": "node-" + name}},
	}}
}

// machineFrom keeps what the pool resolution, the guardrails, healing and
// upgrades read, and nothing of the spec's labels but a control-plane key.
func TestMachineFrom_KeepsWhatTheDecisionsRead(t *testing.T) {
	want := &Machine{
		Namespace: testNamespace, Name: "m1", ResourceVersion: "41", UID: "uid-m1",
		Labels:      map[string]string{"pool": "pool-a"},
		MachineSets: []string{"pool-a-5d8f"},
		Created:     time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		NodeName:    "node-m1",
		Kubelet:     "v1.35.6",
	}
	got := machineFrom(machineObject("m1"))
	got.Created = got.Created.UTC()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("worker record\n got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct {
		name  string
		edit  func(obj map[string]any)
		check func(m *Machine) bool
	}{
		{"a control-plane key in metadata.labels", func(obj map[string]any) {
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"node-role.kubernetes.io/master": ""}
		}, func(m *Machine) bool { return m.ControlPlane }},
		{"a control-plane key in spec.metadata.labels, whatever its value", func(obj map[string]any) {
			obj["spec"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"node-role.kubernetes.io/control-plane": int64(7)}}
		}, func(m *Machine) bool { return m.ControlPlane }},
		{"a deletion timestamp", func(obj map[string]any) {
			obj["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T11:00:00Z"
		}, func(m *Machine) bool { return m.Deleting }},
		{"no nodeRef yet", func(obj map[string]any) { delete(obj, "status") },
			func(m *Machine) bool { return m.NodeName == "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := machineObject("m1")
			tc.edit(u.Object)
			if m := machineFrom(u); !tc.check(m) {
				t.Errorf("record %+v", m)
			}
		})
	}
}

// Fresh reads past the cache: the stopped cache below has never listed,
// yet it sees every Machine the apiserver holds.
func TestMachines_FreshReadsTheAPIServer(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{MachineGVR: "MachineList"}, machineObject("m1"), machineObject("m2"))
	c := NewMachines(client, testNamespace, Options{})
	got, err := c.Fresh(t.Context())
	if err != nil || len(got) != 2 {
		t.Fatalf("Fresh = %v, %v; want both Machines", got, err)
	}
	names := map[string]bool{got[0].Name: true, got[1].Name: true}
	if !names["m1"] || !names["m2"] || got[0].NodeName != "node-"+got[0].Name {
		t.Errorf("Fresh = %+v, %+v; want m1 and m2 compacted", got[0], got[1])
	}
	if c.List() != nil {
		t.Error("List of a stopped cache is not nil after a direct read")
	}
}
