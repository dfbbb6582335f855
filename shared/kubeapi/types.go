package kubeapi

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kinds a cluster has thousands of (nodes, events, pods) travel in
// protobuf and are read by the partial decoders in decode.go.

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Node is a v1 Node as the heartbeat reads it: its key and labels, the cpu
// and memory of its capacity, its conditions and its kubelet's version. The
// rest (images, addresses, the spec, managedFields) is stepped over.
type Node struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            NodeStatus `json:"status,omitempty"`
}

// NodeStatus is the part of a node's status the heartbeat reads.
type NodeStatus struct {
	// Capacity holds the "cpu" and "memory" entries only.
	Capacity   map[string]resource.Quantity `json:"capacity,omitempty"`
	Conditions []Condition                  `json:"conditions,omitempty"`
	NodeInfo   NodeInfo                     `json:"nodeInfo,omitempty"`
}

// NodeInfo is the part of a node's system info the heartbeat reads.
type NodeInfo struct {
	KubeletVersion string `json:"kubeletVersion,omitempty"`
}

// Capacity resources a Node keeps.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
)

// Condition is the type and status of any kind's condition.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Event is a v1 Event as the heartbeat reads it. Its source, related
// object, action and reporting fields are stepped over.
type Event struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	InvolvedObject ObjectReference  `json:"involvedObject"`
	Reason         string           `json:"reason,omitempty"`
	Message        string           `json:"message,omitempty"`
	LastTimestamp  metav1.Time      `json:"lastTimestamp,omitempty"`
	Count          int32            `json:"count,omitempty"`
	Type           string           `json:"type,omitempty"`
	EventTime      metav1.MicroTime `json:"eventTime,omitempty"`
	Series         *EventSeries     `json:"series,omitempty"`
}

// ObjectReference is the part of an event's involved object the heartbeat
// reads.
type ObjectReference struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// EventTypeWarning is the type of the only events the observer counts.
const EventTypeWarning = "Warning"

// EventSeries is the part of an event series the heartbeat reads.
type EventSeries struct {
	LastObservedTime metav1.MicroTime `json:"lastObservedTime,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PodPhase is a Pod as the observer's counts read it: name, namespace,
// resource version and phase. The apiserver sends the whole pod; its
// decoder keeps these four and steps over the rest without allocating, so
// the spec, the container statuses and managedFields never become objects
// that the collector must then sweep. Decoding the full object, and
// collecting what it left, was over half of the observer's CPU in an
// initial sync of 20,000 pods; the observer's BenchmarkDecode
// (internal/cluster) prints both decoders' cost.
//
// It is registered as v1 Pod in a scheme of its own, so only the client that
// feeds the pod counts decodes into it.
type PodPhase struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            PodPhaseStatus `json:"status,omitempty"`
}

// PodPhaseStatus is the one field of a pod's status the counts read.
type PodPhaseStatus struct {
	Phase string `json:"phase,omitempty"`
}

// The kinds below are few and small (one ConfigMap, one Lease, the
// identity Secret, the kube-system pods, the CSRs), so they travel as JSON
// and decode into these structs, which name only the fields the agent
// reads or writes; the apiserver's other fields are ignored on the way in.

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ConfigMap is a v1 ConfigMap.
type ConfigMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Secret is a v1 Secret.
type Secret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Immutable         *bool             `json:"immutable,omitempty"`
	Data              map[string][]byte `json:"data,omitempty"`
	Type              string            `json:"type,omitempty"`
}

// SecretTypeOpaque is the type of a Secret of arbitrary keys.
const SecretTypeOpaque = "Opaque"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Lease is a coordination.k8s.io/v1 Lease.
type Lease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              LeaseSpec `json:"spec,omitempty"`
}

// LeaseSpec is the part of a Lease's spec that says who holds it and until
// when.
type LeaseSpec struct {
	HolderIdentity       *string           `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds,omitempty"`
	RenewTime            *metav1.MicroTime `json:"renewTime,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CertificateSigningRequest is a certificates.k8s.io/v1
// CertificateSigningRequest as the health view reads it.
type CertificateSigningRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            CSRStatus `json:"status,omitempty"`
}

// CSRStatus is the part of a CSR's status the health view reads.
type CSRStatus struct {
	Conditions  []Condition `json:"conditions,omitempty"`
	Certificate []byte      `json:"certificate,omitempty"`
}

// Conditions of a CertificateSigningRequest.
const (
	CertificateApproved = "Approved"
	CertificateDenied   = "Denied"
	CertificateFailed   = "Failed"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Pod is a v1 Pod as the health view reads a control-plane static pod.
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            PodStatus `json:"status,omitempty"`
}

// PodStatus is the part of a pod's status the health view reads.
type PodStatus struct {
	Phase      string      `json:"phase,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Values of pod phases, and of condition types and statuses, that the
// observer compares against.
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"

	PodReady  = "Ready"
	NodeReady = "Ready"

	ConditionTrue  = "True"
	ConditionFalse = "False"
)
