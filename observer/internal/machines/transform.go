package machines

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/machinepool"
	"kubehz.dev/agent/shared/wire"
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
		Namespace: u.GetNamespace(),
		Name:      u.GetName(),
		Labels:    u.GetLabels(),
		Created:   u.GetCreationTimestamp().Time,
		Deleting:  u.GetDeletionTimestamp() != nil,
		Joined:    str(u.Object, "status", "nodeRef", "name") != "",
		// The CRD gives status no schema: the error text is kept only as
		// far as a machine issue carries it.
		ErrorReason:  wire.Clamp(str(u.Object, "status", "errorReason"), wire.MaxLabelLen),
		ErrorMessage: wire.Clamp(str(u.Object, "status", "errorMessage"), wire.MaxNoteLen),
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

// count reads a replica count; what is not one reads as 0, as the wire
// has no "unknown" for it.
func count(obj map[string]any, path ...string) int {
	n, _ := machinepool.Int32(obj, path...)
	return int(n)
}
