package kubeapi

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// A server without protobuf answers the protobuf clients in JSON. The kinds
// they read then keep, from JSON, what their protobuf decoders keep and no
// more, so what the observer caches does not depend on the apiserver's
// content type. Each decodes as the apiserver's JSON decoder would (case
// sensitive), then drops what protobuf would have stepped over.

// UnmarshalJSON decodes a JSON Node, keeping what Unmarshal keeps.
func (n *Node) UnmarshalJSON(b []byte) error {
	type node Node // without this method, so that decoding does not recurse
	if err := unmarshalJSON(b, (*node)(n), &n.ObjectMeta, nodeMetaFields); err != nil {
		return err
	}
	maps.DeleteFunc(n.Status.Capacity, func(r string, _ resource.Quantity) bool {
		return r != ResourceCPU && r != ResourceMemory
	})
	if len(n.Status.Capacity) == 0 {
		n.Status.Capacity = nil
	}
	return nil
}

// UnmarshalJSON decodes a JSON Event, keeping what Unmarshal keeps.
func (e *Event) UnmarshalJSON(b []byte) error {
	type event Event // without this method, so that decoding does not recurse
	return unmarshalJSON(b, (*event)(e), &e.ObjectMeta, eventMetaFields)
}

// UnmarshalJSON decodes a JSON Pod, keeping what Unmarshal keeps.
func (p *PodPhase) UnmarshalJSON(b []byte) error {
	type podPhase PodPhase // without this method, so that decoding does not recurse
	return unmarshalJSON(b, (*podPhase)(p), &p.ObjectMeta, keyFields)
}

// unmarshalJSON decodes b into obj, a kind's struct without its
// UnmarshalJSON method, then keeps of meta, obj's metadata, what
// unmarshalMeta reading the fields in read would have kept.
func unmarshalJSON(b []byte, obj any, meta *metav1.ObjectMeta, read []field) error {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(b, obj); err != nil {
		return err
	}
	keepRead(meta, read)
	return nil
}

// keepRead empties the metadata that unmarshalMeta, reading the fields in
// read, would not have kept.
func keepRead(m *metav1.ObjectMeta, read []field) {
	var kept metav1.ObjectMeta
	for _, f := range read {
		switch f.num {
		case metaName:
			kept.Name = objectName(m.Name)
		case metaNamespace:
			kept.Namespace = m.Namespace
		case metaResourceVersion:
			kept.ResourceVersion = m.ResourceVersion
		case metaCreationTimestamp:
			kept.CreationTimestamp = m.CreationTimestamp
		case metaLabels:
			if len(m.Labels) > 0 {
				kept.Labels = m.Labels
			}
		case metaAnnotations:
			maps.DeleteFunc(m.Annotations, func(k, _ string) bool {
				return !strings.HasPrefix(k, initialEventsAnnotationsPrefix)
			})
			if len(m.Annotations) > 0 {
				kept.Annotations = m.Annotations
			}
		}
	}
	*m = kept
}
