package kubeapi

import (
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// Reset is called by the protobuf serializer before Unmarshal.
func (p *PodPhase) Reset() { *p = PodPhase{} }

// Fields of k8s.io/api/core/v1's Pod that PodPhase reads.
const (
	podStatus      = 3
	podStatusPhase = 1
)

var podFields = []field{{objectMetadata, lenType}, {podStatus, lenType}}

// Unmarshal decodes a protobuf Pod, keeping only what PodPhase holds.
func (p *PodPhase) Unmarshal(b []byte) error {
	return eachField(b, "Pod", podFields, func(num protowire.Number, v []byte) error {
		switch num {
		case objectMetadata:
			return unmarshalMeta(&p.ObjectMeta, v, keyFields)
		case podStatus:
			return readString(v, "PodStatus", podStatusPhase, &p.Status.Phase)
		}
		return nil
	})
}
