package machines

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// The Machine fields docs/contract.md#machine-issues reads.
func TestTransform_MachineReadsExactPaths(t *testing.T) {
	created := time.Date(2026, 7, 6, 11, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		js   string
		want *Machine
	}{
		{
			name: "every field from its path",
			js: `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"Machine",
			  "metadata":{"name":"pool-a-6d8f9b7c4-x2x9z","namespace":"kube-system",
			    "labels":{"pool":"pool-a"},"creationTimestamp":"2026-07-06T11:00:00Z",
			    "ownerReferences":[{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"MachineSet","name":"pool-a-6d8f9b7c4"},
			                       {"kind":"Other","name":"nope"},{"kind":"MachineSet"},"junk"]},
			  "spec":{"metadata":{"labels":{"node":"label"}},"versions":{"kubelet":"1.35.5"},
			    "providerSpec":{"value":{"cloudProvider":"hetzner"}}},
			  "status":{"nodeRef":{"kind":"Node","name":"node-1"},"errorReason":"CreateError",
			    "errorMessage":"server type unavailable"}}`,
			want: &Machine{
				Namespace: "kube-system", Name: "pool-a-6d8f9b7c4-x2x9z", Labels: map[string]string{"pool": "pool-a"},
				MachineSets: []string{"pool-a-6d8f9b7c4"}, Created: created, Joined: true,
				ErrorReason: "CreateError", ErrorMessage: "server type unavailable",
			},
		},
		{
			name: "error text is kept only as far as an issue carries it (63 and 256 units)",
			js: `{"metadata":{"name":"m"},"status":{"errorReason":"` + strings.Repeat("R", 64) +
				`","errorMessage":"` + strings.Repeat("m", 257) + `"}}`,
			want: &Machine{Name: "m", ErrorReason: strings.Repeat("R", 63), ErrorMessage: strings.Repeat("m", 256)},
		},
		{
			name: "a bare Machine has only its name",
			js:   `{"metadata":{"name":"m"}}`,
			want: &Machine{Name: "m"},
		},
		{
			name: "wrongly typed fields read as absent",
			js: `{"metadata":{"name":"m","ownerReferences":{"kind":"MachineSet"},"creationTimestamp":7},
			  "status":{"nodeRef":"node-1","errorReason":3,"errorMessage":["x"]}}`,
			want: &Machine{Name: "m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MachineFrom(obj(t, tt.js))
			got.Created = got.Created.UTC() // parsed in the local zone
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MachineFrom =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// The MachineDeployment fields docs/contract.md#machine-pools and the pools
// on the beat read. Kubelet versions are not read here:
// no pool or issue needs them.
func TestTransform_DeploymentReadsExactPaths(t *testing.T) {
	tests := []struct {
		name         string
		js           string
		want         MachineDeployment // without Selector
		wantSelector string            // "" means nil
	}{
		{
			name: "replicas, ready and a matchLabels selector",
			js: `{"metadata":{"name":"pool-a","namespace":"kube-system","labels":{"x":"y"}},
			  "spec":{"replicas":3,"selector":{"matchLabels":{"pool":"pool-a"}},
			    "template":{"spec":{"versions":{"kubelet":"1.35.5"}}}},
			  "status":{"replicas":3,"readyReplicas":2}}`,
			want:         MachineDeployment{Namespace: "kube-system", Name: "pool-a", Replicas: 3, Ready: 2},
			wantSelector: "pool=pool-a",
		},
		{
			name:         "matchExpressions parse",
			js:           `{"metadata":{"name":"p"},"spec":{"selector":{"matchExpressions":[{"key":"pool","operator":"In","values":["a","b"]}]}}}`,
			want:         MachineDeployment{Name: "p"},
			wantSelector: "pool in (a,b)",
		},
		{
			name: "a bare MD has no selector and no counts",
			js:   `{"metadata":{"name":"p"}}`,
			want: MachineDeployment{Name: "p"},
		},
		{
			name: "an empty selector is nil",
			js:   `{"metadata":{"name":"p"},"spec":{"selector":{"matchLabels":{},"matchExpressions":[]}}}`,
			want: MachineDeployment{Name: "p"},
		},
		{
			name: "an unparsable selector is nil",
			js:   `{"metadata":{"name":"p"},"spec":{"selector":{"matchExpressions":[{"key":"pool","operator":"Sideways"}]}}}`,
			want: MachineDeployment{Name: "p"},
		},
		{
			name: "a wrongly typed selector is nil",
			js:   `{"metadata":{"name":"p"},"spec":{"selector":{"matchLabels":"pool=a"}}}`,
			want: MachineDeployment{Name: "p"},
		},
		{
			name: "whole float counts are read, others are 0",
			js:   `{"metadata":{"name":"p"},"spec":{"replicas":2.0},"status":{"readyReplicas":1.5}}`,
			want: MachineDeployment{Name: "p", Replicas: 2},
		},
		{
			name: "counts beyond int32 are 0",
			js:   `{"metadata":{"name":"p"},"spec":{"replicas":1e12},"status":{"readyReplicas":"3"}}`,
			want: MachineDeployment{Name: "p"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeploymentFrom(obj(t, tt.js))
			selector := ""
			if got.Selector != nil {
				selector = got.Selector.String()
			}
			if selector != tt.wantSelector {
				t.Errorf("selector = %q, want %q", selector, tt.wantSelector)
			}
			got.Selector = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("DeploymentFrom = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// A Machine is deleting from its deletionTimestamp; without a creation time
// its age is 0, so it is never reported joinless.
func TestTransform_DeletingFromDeletionTimestampAgeZeroWithoutCreation(t *testing.T) {
	deleting := MachineFrom(obj(t, `{"metadata":{"name":"m","creationTimestamp":"2026-07-06T11:00:00Z",
		"deletionTimestamp":"2026-07-06T11:59:00Z"}}`))
	if !deleting.Deleting {
		t.Error("a Machine with deletionTimestamp is not deleting")
	}
	if got := deleting.Age(now); got != time.Hour {
		t.Errorf("Age = %v, want 1h0m0s", got)
	}
	fresh := MachineFrom(obj(t, `{"metadata":{"name":"m"}}`))
	if fresh.Deleting {
		t.Error("a Machine without deletionTimestamp is deleting")
	}
	if got := fresh.Age(now); got != 0 {
		t.Errorf("Age without creationTimestamp = %v, want 0", got)
	}
}

func TestTransform_IdempotentAndUnwrapsTombstones(t *testing.T) {
	m := obj(t, `{"metadata":{"name":"m","namespace":"kube-system"}}`)
	for name, tf := range map[string]cache.TransformFunc{"machine": machineTransform, "deployment": deploymentTransform} {
		t.Run(name, func(t *testing.T) {
			once, err := tf(m)
			if err != nil {
				t.Fatal(err)
			}
			twice, err := tf(once)
			if err != nil || twice != once {
				t.Errorf("second transform = %v, %v; want the same record", twice, err)
			}
			tomb, err := tf(cache.DeletedFinalStateUnknown{Key: "kube-system/m", Obj: m})
			d, ok := tomb.(cache.DeletedFinalStateUnknown)
			if err != nil || !ok || d.Key != "kube-system/m" || reflect.TypeOf(d.Obj) != reflect.TypeOf(once) {
				t.Errorf("tombstone = %#v, %v; want the compact record inside", tomb, err)
			}
			empty := cache.DeletedFinalStateUnknown{Key: "k"}
			if got, err := tf(empty); err != nil || got != empty {
				t.Errorf("empty tombstone = %#v, %v; want it unchanged", got, err)
			}
			if _, err := tf(&unstructured.UnstructuredList{}); err == nil {
				t.Error("an unexpected type was accepted")
			}
		})
	}
}
