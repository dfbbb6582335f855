package kubeapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
