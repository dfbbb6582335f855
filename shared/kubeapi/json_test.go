package kubeapi

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// TestKinds_DecodeTheSameFromJSONAndProtobuf encodes each object as the
// apiserver does in both content types and decodes both as the protobuf
// clients do (they accept JSON from a server without protobuf): the two
// must be equal, and equal to what the protobuf tests pin.
func TestKinds_DecodeTheSameFromJSONAndProtobuf(t *testing.T) {
	labels := map[string]string{"node-role.kubernetes.io/worker": ""}
	annotations := map[string]string{"node.alpha.kubernetes.io/ttl": "0", "k8s.io/initial-events-end": "true"}
	node, event, pod := fullNode("wrk-a", labels, annotations), fullEvent("wrk-a.1", 3, true), fullPod("web-0", "Running", annotations)
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9000", Annotations: annotations}}
	tests := []struct {
		name   string
		codecs serializer.CodecFactory
		in     runtime.Object
		want   runtime.Object
	}{
		{"node", codecs, node, new(asNode(node))},
		{"node list", codecs, &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "90"},
			Items: []corev1.Node{*node, *fullNode("ctl-a", nil, nil)}},
			&NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "90"}, Items: []Node{asNode(node), asNode(fullNode("ctl-a", nil, nil))}}},
		{"event", codecs, event, new(asEvent(event))},
		{"event list", codecs, &corev1.EventList{Items: []corev1.Event{*event, *fullEvent("b", 1, false)}},
			&EventList{Items: []Event{asEvent(event), asEvent(fullEvent("b", 1, false))}}},
		{"pod", phaseCodecs, pod, new(asPhase(pod))},
		{"watch-list bookmark", phaseCodecs, bookmark, new(asPhase(bookmark))},
		{"pod list", phaseCodecs, &corev1.PodList{Items: []corev1.Pod{*pod, *fullPod("web-1", "Pending", nil)}},
			&PodPhaseList{Items: []PodPhase{asPhase(pod), asPhase(fullPod("web-1", "Pending", nil))}}},
	}
	apiserver := newAPIServerCodec(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fromProtobuf := decodeAs(t, tt.codecs, runtime.ContentTypeProtobuf, apiserver.object(tt.in))
			fromJSON := decodeAs(t, tt.codecs, runtime.ContentTypeJSON, apiserver.jsonObject(tt.in))
			if !reflect.DeepEqual(fromJSON, fromProtobuf) {
				t.Fatalf("from JSON %#v\nfrom protobuf %#v", fromJSON, fromProtobuf)
			}
			if !sameObject(fromProtobuf, tt.want) {
				t.Fatalf("decoded %#v\nwant %#v", fromProtobuf, tt.want)
			}
		})
	}
}

// decodeAs decodes data as a client of cf reads a body of mediaType.
func decodeAs(t *testing.T, cf serializer.CodecFactory, mediaType string, data []byte) runtime.Object {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(cf.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no %s serializer", mediaType)
	}
	obj, err := runtime.Decode(cf.WithoutConversion().DecoderToVersion(info.Serializer, coreV1), data)
	if err != nil {
		t.Fatalf("decode %s: %v", mediaType, err)
	}
	return obj
}

// sameObject compares with the protobuf tests' own comparisons, which
// allow for times and quantities that are equal but built differently.
func sameObject(got, want runtime.Object) bool {
	switch w := want.(type) {
	case *Node:
		g, ok := got.(*Node)
		return ok && sameNode(*g, *w)
	case *NodeList:
		g, ok := got.(*NodeList)
		return ok && reflect.DeepEqual(g.ListMeta, w.ListMeta) && len(g.Items) == len(w.Items) &&
			allSame(g.Items, w.Items, sameNode)
	case *Event:
		g, ok := got.(*Event)
		return ok && sameEvent(*g, *w)
	case *EventList:
		g, ok := got.(*EventList)
		return ok && reflect.DeepEqual(g.ListMeta, w.ListMeta) && len(g.Items) == len(w.Items) &&
			allSame(g.Items, w.Items, sameEvent)
	case *PodPhase:
		g, ok := got.(*PodPhase)
		return ok && samePhase(*g, *w)
	case *PodPhaseList:
		g, ok := got.(*PodPhaseList)
		return ok && reflect.DeepEqual(g.ListMeta, w.ListMeta) && len(g.Items) == len(w.Items) &&
			allSame(g.Items, w.Items, samePhase)
	}
	return false
}

func allSame[T any](a, b []T, same func(T, T) bool) bool {
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}
