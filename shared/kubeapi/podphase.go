package kubeapi

import (
	"fmt"

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
// generated.proto that the decoders read.
const (
	podMetadata, podStatus         = 1, 3
	podStatusPhase                 = 1
	listMetadata, listItems        = 1, 2
	metaName, metaNamespace        = 1, 3
	metaResourceVersion            = 6
	metaAnnotations                = 12
	mapEntryKey, mapEntryValue     = 1, 2
	initialEventsAnnotationsPrefix = "k8s.io/initial-events-"
)

// Unmarshal decodes a protobuf Pod, keeping only what PodPhase holds.
func (p *PodPhase) Unmarshal(b []byte) error {
	return eachField(b, "Pod", func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case podMetadata:
			if err := want(num, "Pod", typ, protowire.BytesType); err != nil {
				return err
			}
			return unmarshalMeta(&p.ObjectMeta, v)
		case podStatus:
			if err := want(num, "Pod", typ, protowire.BytesType); err != nil {
				return err
			}
			return eachField(v, "PodStatus", func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != podStatusPhase {
					return nil
				}
				if err := want(num, "PodStatus", typ, protowire.BytesType); err != nil {
					return err
				}
				p.Status.Phase = corev1.PodPhase(v)
				return nil
			})
		}
		return nil
	})
}

// Unmarshal decodes a protobuf PodList.
func (l *PodPhaseList) Unmarshal(b []byte) error {
	return eachField(b, "PodList", func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case listMetadata:
			if err := want(num, "PodList", typ, protowire.BytesType); err != nil {
				return err
			}
			return l.ListMeta.Unmarshal(v)
		case listItems:
			if err := want(num, "PodList", typ, protowire.BytesType); err != nil {
				return err
			}
			l.Items = append(l.Items, PodPhase{})
			return l.Items[len(l.Items)-1].Unmarshal(v)
		}
		return nil
	})
}

// unmarshalMeta keeps what an informer reads of an object's metadata: the
// key, the resource version, and the annotations the apiserver sets on a
// watch-list bookmark (the reflector reads "k8s.io/initial-events-end" to
// know the initial list has ended). A pod's own labels and annotations are
// skipped.
func unmarshalMeta(m *metav1.ObjectMeta, b []byte) error {
	return eachField(b, "ObjectMeta", func(num protowire.Number, typ protowire.Type, v []byte) error {
		var into *string
		switch num {
		case metaName:
			into = &m.Name
		case metaNamespace:
			into = &m.Namespace
		case metaResourceVersion:
			into = &m.ResourceVersion
		case metaAnnotations:
			if err := want(num, "ObjectMeta", typ, protowire.BytesType); err != nil {
				return err
			}
			return unmarshalAnnotation(m, v)
		default:
			return nil
		}
		if err := want(num, "ObjectMeta", typ, protowire.BytesType); err != nil {
			return err
		}
		*into = string(v)
		return nil
	})
}

func unmarshalAnnotation(m *metav1.ObjectMeta, b []byte) error {
	var key, value []byte
	err := eachField(b, "annotation", func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != mapEntryKey && num != mapEntryValue {
			return nil
		}
		if err := want(num, "annotation", typ, protowire.BytesType); err != nil {
			return err
		}
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

// eachField calls fn with every field of the message b in order: its number,
// its wire type, and for a length-delimited field its bytes (nil for the
// others, which no caller reads). A truncated or malformed message is an
// error, as it is for the generated decoders.
func eachField(b []byte, message string, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("decode %s: %w", message, protowire.ParseError(n))
		}
		b = b[n:]
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
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}

// want refuses a field read with a wire type other than its declared one,
// as the generated decoders do.
func want(num protowire.Number, message string, got, declared protowire.Type) error {
	if got != declared {
		return fmt.Errorf("decode %s field %d: wire type %d, want %d", message, num, got, declared)
	}
	return nil
}
