package cluster

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/machinepool"
)

// MachineGVR is machine-controller's Machine, in the MD namespace.
var MachineGVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}

// Machine is what healing and upgrades read from one Machine.
type Machine struct {
	Namespace, Name, ResourceVersion string
	UID                              types.UID
	Labels                           map[string]string // metadata.labels, what MD selectors match
	MachineSets                      []string          // owners of kind MachineSet, the pool fallback
	// ControlPlane is set when metadata.labels or spec.metadata.labels
	// carry a control-plane key; only that is kept of spec.metadata.labels.
	ControlPlane bool
	Created      time.Time // zero when absent
	Deleting     bool
	NodeName     string // status.nodeRef.name
	Kubelet      string // spec.versions.kubelet
}

// GetObjectMeta implements metav1.ObjectMetaAccessor for the informer's key.
func (m *Machine) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}
}

// Machines is the Machines of one namespace, cached on demand. They are
// read as a list: nothing looks one up by name.
type Machines struct {
	onDemand[*unstructured.Unstructured, *Machine]
}

// NewMachines builds a stopped cache.
func NewMachines(dyn dynamic.Interface, namespace string, opts Options) *Machines {
	ri := dyn.Resource(MachineGVR).Namespace(namespace)
	return &Machines{inNamespace(dyn, ri, MachineGVR, "Machine", namespace, machineFrom, opts)}
}

// List returns the cached Machines; nil when the cache is stopped.
func (c *Machines) List() []*Machine { return c.cached() }

// Fresh lists the Machines straight from the apiserver.
func (c *Machines) Fresh(ctx context.Context) ([]*Machine, error) { return c.fresh(ctx) }

func machineFrom(u *unstructured.Unstructured) *Machine {
	specLabels, _, _ := unstructured.NestedMap(u.Object, "spec", "metadata", "labels")
	specKeys := make(map[string]string, len(specLabels))
	for k := range specLabels {
		specKeys[k] = "" // only keys matter, and a non-string value must not hide one
	}
	node, _, _ := unstructured.NestedString(u.Object, "status", "nodeRef", "name")
	kubelet, _, _ := unstructured.NestedString(u.Object, "spec", "versions", "kubelet")
	return &Machine{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
		Labels:       u.GetLabels(),
		MachineSets:  machinepool.MachineSets(u.Object),
		ControlPlane: refuse.ControlPlaneLabel(u.GetLabels()) != "" || refuse.ControlPlaneLabel(specKeys) != "",
		Created:      u.GetCreationTimestamp().Time,
		Deleting:     u.GetDeletionTimestamp() != nil,
		NodeName:     node,
		Kubelet:      kubelet,
	}
}
