package machines

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/machinepool"

	"kubehz.dev/agent/shared/informer"
)

// APIGroup is machine-controller's legacy group, not cluster.x-k8s.io.
const APIGroup = "cluster.k8s.io"

// The resources read, both in the MD namespace.
var (
	MachinesResource    = schema.GroupVersionResource{Group: APIGroup, Version: "v1alpha1", Resource: "machines"}
	DeploymentsResource = schema.GroupVersionResource{Group: APIGroup, Version: "v1alpha1", Resource: "machinedeployments"}
)

// Transforms run before an object enters an informer cache. They are
// idempotent: client-go may hand an already-compacted record back through
// them (relist replays, tombstones built from the cache).

var (
	machineTransform    = informer.Transform("machine", MachineFrom)
	deploymentTransform = informer.Transform("machinedeployment", DeploymentFrom)
)

// MachineFrom compacts a Machine. Fields of the wrong type read as absent.
func MachineFrom(u *unstructured.Unstructured) *Machine {
	m := &Machine{
		Namespace:    u.GetNamespace(),
		Name:         u.GetName(),
		Labels:       u.GetLabels(),
		Created:      u.GetCreationTimestamp().Time,
		Deleting:     u.GetDeletionTimestamp() != nil,
		NodeName:     str(u.Object, "status", "nodeRef", "name"),
		ErrorReason:  str(u.Object, "status", "errorReason"),
		ErrorMessage: str(u.Object, "status", "errorMessage"),
	}
	m.MachineSets = machinepool.MachineSets(u.Object)
	return m
}

// DeploymentFrom compacts a MachineDeployment; the selector is parsed here,
// once, rather than on every pass.
func DeploymentFrom(u *unstructured.Unstructured) *MachineDeployment {
	return &MachineDeployment{
		Namespace: u.GetNamespace(),
		Name:      u.GetName(),
		Selector:  machinepool.Selector(u.Object),
		Replicas:  count(u.Object, "spec", "replicas"),
		Ready:     count(u.Object, "status", "readyReplicas"),
	}
}

func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// count reads an integer tolerantly: int64 from the apiserver's JSON, or a
// whole float64 from other decoders. Anything else, or out of int32 range
// (replica counts are int32), reads as 0.
func count(obj map[string]any, path ...string) int {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0
	}
	return int(f)
}
