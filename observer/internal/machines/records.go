// Package machines reports machine-controller's view of the worker pools: the
// failures it cannot fix by itself (machineIssues) and each
// MachineDeployment's replica counts (pools). It reads cluster.k8s.io/v1alpha1
// Machines and MachineDeployments in one namespace through informers whose
// caches hold compact records, and it stays quiet, without an error loop, on
// clusters where the CRDs or the read permission are missing.
package machines

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Machine is everything issues and pool resolution read from a Machine.
type Machine struct {
	Namespace string
	Name      string
	Labels    map[string]string // metadata.labels, what MD selectors match
	// MachineSets names the owners of kind MachineSet, the pool fallback.
	MachineSets []string
	Created     time.Time // zero when metadata.creationTimestamp is absent
	Deleting    bool      // metadata.deletionTimestamp is set
	// Joined says status.nodeRef.name is set: the Node joined. Only that is
	// read, and the name, which status gives no schema, is not kept.
	Joined       bool
	ErrorReason  string // terminal: machine-controller gave up
	ErrorMessage string
}

// Age is how long ago the Machine was created; 0 without a creation time, so
// such a machine never looks overdue.
func (m *Machine) Age(now time.Time) time.Duration {
	if m.Created.IsZero() {
		return 0
	}
	return now.Sub(m.Created)
}

// MachineDeployment is everything pools and resolution read from an MD.
type MachineDeployment struct {
	Namespace string
	Name      string
	// Selector is nil when spec.selector is absent, empty or unparsable: an
	// empty selector would match every machine, so it never claims one.
	Selector labels.Selector
	Replicas int // spec.replicas, 0 when absent
	Ready    int // status.readyReplicas, 0 when absent
}

// The informer machinery keys objects through meta.Accessor; a throwaway
// ObjectMeta with only the key fields satisfies it.

// GetObjectMeta implements metav1.ObjectMetaAccessor.
func (m *Machine) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}
}

// GetObjectMeta implements metav1.ObjectMetaAccessor.
func (d *MachineDeployment) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name}
}
