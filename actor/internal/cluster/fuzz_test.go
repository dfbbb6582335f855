package cluster

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzRecords feeds arbitrary JSON objects, as a hostile or broken CRD could
// serve them, through the Machine and MachineDeployment transforms: they
// must never panic, and what the guardrails read must follow the object.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"m","labels":{"node-role.kubernetes.io/master":""},"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"nodeRef":{"name":"n"}}}`))
	f.Add([]byte(`{"metadata":{"name":"m"},"spec":{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":7}},"versions":{"kubelet":1}}}`))
	f.Add([]byte(`{"metadata":{"name":"pool"},"spec":{"replicas":2.5,"selector":{"matchLabels":{"a":"b"}},"template":{"spec":{"versions":{"kubelet":"v1.35.5"}}}}}`))
	f.Add([]byte(`{"metadata":{"ownerReferences":[{"kind":"MachineSet","name":"pool-a-1"},7,null]},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}}}`))
	f.Add([]byte(`{"metadata":{"name":"pool"},"spec":{"replicas":4,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":"50%"}}}}`))
	f.Add([]byte(`{"metadata":{"name":"pool"},"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":1.5}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		u := &unstructured.Unstructured{Object: obj}
		m := machineFrom(u)
		if m.Name != u.GetName() || m.Deleting != (u.GetDeletionTimestamp() != nil) {
			t.Fatalf("machine record %+v does not follow the object", m)
		}
		for _, key := range []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"} {
			if _, ok := u.GetLabels()[key]; ok && !m.ControlPlane {
				t.Fatalf("label %s present but the machine is not control plane", key)
			}
			specLabels, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "metadata", "labels")
			if l, ok := specLabels.(map[string]any); ok {
				if _, ok := l[key]; ok && !m.ControlPlane {
					t.Fatalf("spec label %s present but the machine is not control plane", key)
				}
			}
		}
		r := machineDeploymentFrom(u)
		if r.Name != u.GetName() {
			t.Fatalf("MachineDeployment record %+v does not follow the object", r)
		}
		if r.Replicas != nil && (*r.Replicas < 0 || *r.Replicas > 2147483647) {
			t.Fatalf("replicas %d is no int32 count", *r.Replicas)
		}
		if r.Selector != nil && r.Selector.Empty() {
			t.Fatal("an empty selector would claim every machine")
		}
		// A bound that is there must never read as absent, which would
		// take machine-controller's default of none down at once.
		down, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "strategy", "rollingUpdate", "maxUnavailable")
		if down != nil && r.Rollout.MaxUnavailable == nil && !r.Rollout.Unreadable {
			t.Fatalf("maxUnavailable %v read as absent", down)
		}
	})
}
