package cluster

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

const testNamespace = "kube-system"

// newFakeDynamic is an apiserver serving MachineDeployments only.
func newFakeDynamic(objects ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{MachineDeploymentGVR: "MachineDeploymentList"}, objects...)
}

// newMDCache is a stopped MachineDeployment cache of testNamespace on client,
// whose discovery says every resource is served.
func newMDCache(client *dynamicfake.FakeDynamicClient) *MachineDeployments {
	served := func(context.Context, schema.GroupVersionResource) error { return nil }
	return NewMachineDeployments(client, testNamespace, Options{Served: served})
}

// transform is the MachineDeployment cache's informer transform, as the
// informer runs it.
var transform = newMDCache(newFakeDynamic()).transform()

// machineDeployment builds the object as the dynamic client decodes it from
// JSON: nested maps, strings, and numbers as int64 or float64.
func machineDeployment(namespace, name string, replicas any) *unstructured.Unstructured {
	spec := map[string]any{}
	if replicas != nil {
		spec["replicas"] = replicas
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "MachineDeployment",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       spec,
	}}
}

func int64Ptr(n int64) *int64 { return &n }

// countVerb counts the requests of one verb client received for
// MachineDeployments.
func countVerb(client *dynamicfake.FakeDynamicClient, verb string) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == verb && a.GetResource() == MachineDeploymentGVR {
			n++
		}
	}
	return n
}
