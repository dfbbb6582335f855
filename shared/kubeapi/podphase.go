package kubeapi

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PodPhase is a Pod as the observer's counts read it: name, namespace,
// resource version and phase. The apiserver sends the whole pod; its
// decoder keeps these four and steps over the rest without allocating, so
// the spec, the container statuses and managedFields never become objects
// that the collector must then sweep. Decoding the full object, and
// collecting what it left, was over half of the observer's CPU in an
// initial sync of 20,000 pods; the observer's BenchmarkPodDecode
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
	Phase corev1.PodPhase `json:"phase,omitempty"`
}

// PodPhaseList is a PodList of PodPhases.
type PodPhaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodPhase `json:"items"`
}

// DeepCopyInto copies p into out. Defined here so that the embedded
// ObjectMeta's, which copies the metadata only, is not promoted in its place.
func (p *PodPhase) DeepCopyInto(out *PodPhase) {
	out.TypeMeta, out.Status = p.TypeMeta, p.Status
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopyObject implements runtime.Object.
func (p *PodPhase) DeepCopyObject() runtime.Object {
	out := &PodPhase{}
	p.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies l into out; see PodPhase.DeepCopyInto.
func (l *PodPhaseList) DeepCopyInto(out *PodPhaseList) {
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if l.Items != nil {
		out.Items = make([]PodPhase, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *PodPhaseList) DeepCopyObject() runtime.Object {
	out := &PodPhaseList{}
	l.DeepCopyInto(out)
	return out
}

// Reset is called by the protobuf serializer before Unmarshal.
func (p *PodPhase) Reset() { *p = PodPhase{} }

// Reset is called by the protobuf serializer before Unmarshal.
func (l *PodPhaseList) Reset() { *l = PodPhaseList{} }

// Field numbers of k8s.io/api/core/v1 and k8s.io/apimachinery's
// generated.proto that the decoders read; every one is length-delimited.
const (
	podMetadata, podStatus     = 1, 3
	podStatusPhase             = 1
	listMetadata, listItems    = 1, 2
	metaName, metaNamespace    = 1, 3
	metaResourceVersion        = 6
	metaAnnotations            = 12
	mapEntryKey, mapEntryValue = 1, 2

	initialEventsAnnotationsPrefix = "k8s.io/initial-events-"
)

// Unmarshal decodes a protobuf Pod, keeping only what PodPhase holds.
func (p *PodPhase) Unmarshal(b []byte) error {
	return eachField(b, "Pod", []protowire.Number{podMetadata, podStatus}, func(num protowire.Number, v []byte) error {
		if num == podMetadata {
			return unmarshalMeta(&p.ObjectMeta, v)
		}
		return eachField(v, "PodStatus", []protowire.Number{podStatusPhase}, func(_ protowire.Number, v []byte) error {
			p.Status.Phase = corev1.PodPhase(v)
			return nil
		})
	})
}

// Unmarshal decodes a protobuf PodList.
func (l *PodPhaseList) Unmarshal(b []byte) error {
	return eachField(b, "PodList", []protowire.Number{listMetadata, listItems}, func(num protowire.Number, v []byte) error {
		if num == listMetadata {
			return l.ListMeta.Unmarshal(v)
		}
		l.Items = append(l.Items, PodPhase{})
		return l.Items[len(l.Items)-1].Unmarshal(v)
	})
}

// unmarshalMeta keeps what an informer reads of an object's metadata: the
// key, the resource version, and the annotations the apiserver sets on a
// watch-list bookmark (the reflector reads "k8s.io/initial-events-end" to
// know the initial list has ended). A pod's own labels and annotations are
// skipped.
func unmarshalMeta(m *metav1.ObjectMeta, b []byte) error {
	read := []protowire.Number{metaName, metaNamespace, metaResourceVersion, metaAnnotations}
	return eachField(b, "ObjectMeta", read, func(num protowire.Number, v []byte) error {
		switch num {
		case metaName:
			m.Name = string(v)
		case metaNamespace:
			m.Namespace = string(v)
		case metaResourceVersion:
			m.ResourceVersion = string(v)
		default:
			return unmarshalAnnotation(m, v)
		}
		return nil
	})
}

func unmarshalAnnotation(m *metav1.ObjectMeta, b []byte) error {
	var key, value []byte
	err := eachField(b, "annotation", []protowire.Number{mapEntryKey, mapEntryValue}, func(num protowire.Number, v []byte) error {
		if num == mapEntryKey {
			key = v
		} else {
			value = v
		}
		return nil
	})
	// Compared as a string conversion, which does not allocate.
	prefix := len(initialEventsAnnotationsPrefix)
	if err != nil || len(key) < prefix || string(key[:prefix]) != initialEventsAnnotationsPrefix {
		return err
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[string(key)] = string(value)
	return nil
}

// eachField calls fn, in order, with the number and bytes of every field of
// the message b whose number is in read, and steps over the others. A read
// field sent other than length-delimited, or a truncated or malformed
// message, is an error, as it is for the generated decoders.
func eachField(b []byte, message string, read []protowire.Number, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("decode %s: %w", message, protowire.ParseError(n))
		}
		b = b[n:]
		wanted := slices.Contains(read, num)
		if wanted && typ != protowire.BytesType {
			return fmt.Errorf("decode %s field %d: wire type %d, want %d", message, num, typ, protowire.BytesType)
		}
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("decode %s field %d: %w", message, num, protowire.ParseError(n))
		}
		b = b[n:]
		if wanted {
			if err := fn(num, v); err != nil {
				return err
			}
		}
	}
	return nil
}
