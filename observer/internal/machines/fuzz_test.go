package machines

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// FuzzMachineRecord feeds arbitrary JSON objects through both transforms, a
// second time (idempotence), as tombstones, and into one pass: a malformed
// object from the apiserver must never panic the informer or the pass.
func FuzzMachineRecord(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"m","labels":{"pool":"a"},"ownerReferences":[{"kind":"MachineSet","name":"a-1"}],
		  "creationTimestamp":"2026-07-06T11:00:00Z","deletionTimestamp":"x"},
		  "status":{"nodeRef":{"name":"n"},"errorReason":"CreateError","errorMessage":"quota"}}`,
		`{"metadata":{"name":"a"},"spec":{"replicas":3,"selector":{"matchLabels":{"pool":"a"},
		  "matchExpressions":[{"key":"k","operator":"NotIn","values":["v"]}]}},"status":{"readyReplicas":2.5}}`,
		`{"metadata":{"name":7,"labels":[1],"ownerReferences":[null,{"kind":1}]},"spec":{"selector":{"matchExpressions":"x"}}}`,
		`{"spec":{"selector":{"matchExpressions":[{"key":"","operator":"In","values":[null]}]},"replicas":-1e308}}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fields map[string]any
		if json.Unmarshal(data, &fields) != nil || fields == nil {
			return
		}
		u := &unstructured.Unstructured{Object: fields}
		var machines []*Machine
		var mds []*MachineDeployment
		for _, tf := range []cache.TransformFunc{machineTransform, deploymentTransform} {
			rec, err := tf(u)
			if err != nil {
				t.Fatalf("transform of an object failed: %v", err)
			}
			if again, err := tf(rec); err != nil || again != rec {
				t.Fatalf("transform is not idempotent: %v", err)
			}
			if _, err := tf(cache.DeletedFinalStateUnknown{Key: "k", Obj: u}); err != nil {
				t.Fatalf("tombstone: %v", err)
			}
			switch r := rec.(type) {
			case *Machine:
				_ = r.GetObjectMeta()
				machines = append(machines, r)
			case *MachineDeployment:
				_ = r.GetObjectMeta()
				mds = append(mds, r)
			}
		}
		issues, _ := Issues(Observed{Namespace: ns, Machines: machines, Deployments: mds}, nil, now)
		for _, is := range issues {
			if is.Pool == "" || is.Reason == "" {
				t.Fatalf("invalid issue %+v", is)
			}
		}
		_ = Pools(mds)
	})
}
