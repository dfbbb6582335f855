package kubeapi

import (
	"fmt"
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// List is every kind's List: one generic type rather than a struct per kind,
// so a kind's list cannot drift from the others. deepcopy-gen does not read
// generic types, so its deep copy is the one written here, over the items'
// generated DeepCopyInto. A List registers under its kind's list name
// (scheme.AddKnownTypeWithName), as its Go type name is not one.
//
// +k8s:deepcopy-gen=false
type List[T any, P item[T]] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []T `json:"items"`
}

// item is a kind a List holds, by value, deep-copied by its pointer.
type item[T any] interface {
	*T
	DeepCopyInto(*T)
}

type (
	// The lists of the kinds this package defines.
	NodeList                      = List[Node, *Node]
	EventList                     = List[Event, *Event]
	PodPhaseList                  = List[PodPhase, *PodPhase]
	PodList                       = List[Pod, *Pod]
	ConfigMapList                 = List[ConfigMap, *ConfigMap]
	SecretList                    = List[Secret, *Secret]
	LeaseList                     = List[Lease, *Lease]
	CertificateSigningRequestList = List[CertificateSigningRequest, *CertificateSigningRequest]
)

// DeepCopyInto copies l and every item into out. Defined here, it also
// keeps the embedded ListMeta's DeepCopyInto from being promoted to List.
func (l *List[T, P]) DeepCopyInto(out *List[T, P]) {
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = nil
	if l.Items != nil {
		out.Items = make([]T, len(l.Items))
		for i := range l.Items {
			P(&l.Items[i]).DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy is a new copy of l, or nil.
func (l *List[T, P]) DeepCopy() *List[T, P] {
	if l == nil {
		return nil
	}
	out := new(List[T, P])
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject is DeepCopy as a runtime.Object.
func (l *List[T, P]) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// Reset is called by the protobuf serializer before Unmarshal.
func (l *List[T, P]) Reset() { *l = List[T, P]{} }

// Unmarshal decodes a protobuf List of a kind that has a protobuf decoder
// (Node, Event, PodPhase). The other kinds travel as JSON only: a List of
// them refuses protobuf, empty or not, as it did before List was generic.
func (l *List[T, P]) Unmarshal(b []byte) error {
	name := reflect.TypeFor[T]().Name() + "List"
	if _, ok := any(P(nil)).(interface{ Unmarshal([]byte) error }); !ok {
		return fmt.Errorf("decode %s: the kind is read as JSON only", name)
	}
	return eachField(b, name, listFields, func(num protowire.Number, v []byte) error {
		switch num {
		case listMetadata:
			return l.ListMeta.Unmarshal(v)
		case listItems:
			l.Items = append(l.Items, *new(T))
			return any(P(&l.Items[len(l.Items)-1])).(interface{ Unmarshal([]byte) error }).Unmarshal(v)
		}
		return nil
	})
}
