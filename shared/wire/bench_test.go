package wire_test

import (
	"fmt"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// BenchmarkCap5000Nodes is a large cluster's beat: realistic, mostly ASCII
// strings, so nearly every Clamp takes the fast path and the cost is the
// copy, the sort and the truncation.
func BenchmarkCap5000Nodes(b *testing.B) {
	src := wire.Payload{Schema: wire.Schema, ClusterID: "demo.example.net", Timestamp: "2026-07-06T09:15:00Z"}
	for i := 5000; i > 0; i-- {
		src.Nodes = append(src.Nodes, wire.Node{
			Name: fmt.Sprintf("workers-a-7f9c-%05d", i), Status: wire.NodeReady, Ready: true,
			Roles: "worker", InstanceType: "cpx21", KubeletVersion: "v1.35.5",
			Capacity: &wire.Capacity{CPU: "4", Memory: "8148Mi"},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		p := src // Cap copies instead of writing through, so src stays as built
		p.Cap()
	}
}
