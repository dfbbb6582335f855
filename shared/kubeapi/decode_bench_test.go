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
	decoders := []struct {
		name string
		in   interface{ Marshal() ([]byte, error) }
		into func() interface{ Unmarshal([]byte) error }
	}{
		{"protobuf/NodeList-5000", nodes, func() interface{ Unmarshal([]byte) error } { return new(NodeList) }},
		{"protobuf/PodPhaseList-50000", pods, func() interface{ Unmarshal([]byte) error } { return new(PodPhaseList) }},
		{"protobuf/EventList-1000", events, func() interface{ Unmarshal([]byte) error } { return new(EventList) }},
	}
	for _, d := range decoders {
		data, err := d.in.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := d.into().Unmarshal(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	jsonDecoders := []struct {
		name string
		in   any
		into func() json.Unmarshaler
	}{
		{"json/Node", &nodes.Items[0], func() json.Unmarshaler { return new(Node) }},
		{"json/PodPhase", &pods.Items[0], func() json.Unmarshaler { return new(PodPhase) }},
		{"json/Event", &events.Items[0], func() json.Unmarshaler { return new(Event) }},
	}
	for _, d := range jsonDecoders {
		data, err := json.Marshal(d.in)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := d.into().UnmarshalJSON(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
