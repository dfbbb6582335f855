package kubeapi

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkDecode prints what the partial decoders cost on the sizes the
// observer lists (5,000 nodes, 50,000 pods, 1,000 Warning events) in
// protobuf, and on one object of each kind in the JSON a server without
// protobuf sends. A change to the decoders' shape should not move allocs/op.
func BenchmarkDecode(b *testing.B) {
	nodes := &corev1.NodeList{Items: make([]corev1.Node, 5000)}
	for i := range nodes.Items {
		nodes.Items[i] = *fullNode(fmt.Sprintf("wrk-%d", i), map[string]string{"node-role.kubernetes.io/worker": ""}, nil)
	}
	pods := &corev1.PodList{Items: make([]corev1.Pod, 50000)}
	for i := range pods.Items {
		pods.Items[i] = *fullPod(fmt.Sprintf("web-%d", i), "Running", nil)
	}
	events := &corev1.EventList{Items: make([]corev1.Event, 1000)}
	for i := range events.Items {
		events.Items[i] = *fullEvent(fmt.Sprintf("wrk-%d.1", i), 3, i%2 == 0)
	}
	protobuf := func(obj interface{ Marshal() ([]byte, error) }) []byte {
		data, err := obj.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	asJSON := func(obj any) []byte {
		data, err := json.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	decoders := []struct {
		name   string
		data   []byte
		decode func([]byte) error
	}{
		{"protobuf/NodeList-5000", protobuf(nodes), func(data []byte) error { return new(NodeList).Unmarshal(data) }},
		{"protobuf/PodPhaseList-50000", protobuf(pods), func(data []byte) error { return new(PodPhaseList).Unmarshal(data) }},
		{"protobuf/EventList-1000", protobuf(events), func(data []byte) error { return new(EventList).Unmarshal(data) }},
		{"json/Node", asJSON(&nodes.Items[0]), func(data []byte) error { return new(Node).UnmarshalJSON(data) }},
		{"json/PodPhase", asJSON(&pods.Items[0]), func(data []byte) error { return new(PodPhase).UnmarshalJSON(data) }},
		{"json/Event", asJSON(&events.Items[0]), func(data []byte) error { return new(Event).UnmarshalJSON(data) }},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := d.decode(d.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
