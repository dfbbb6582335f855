package beat

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

// BenchmarkBeat is one beat as the observer's loop produces it: Build (the
// cap pass included) and json.Marshal over cached records and pod counts,
// from a small cluster to the design's largest (5,000 nodes, 150,000 pods),
// each with 1,000 Warning events. With namespaces=true every pod also lands
// in the byNamespace count.
// payload-B is the marshalled beat, in bytes.
func BenchmarkBeat(b *testing.B) {
	sizes := []struct{ nodes, pods int }{{5, 50}, {500, 5000}, {5000, 150000}}
	for _, s := range sizes {
		for _, byNamespace := range []bool{false, true} {
			in := beatInput(s.nodes, s.pods, 1000)
			in.ReportNamespaces = byNamespace
			name := fmt.Sprintf("nodes=%d/pods=%d/namespaces=%t", s.nodes, s.pods, byNamespace)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var size int
				for b.Loop() {
					body, err := json.Marshal(Build(in))
					if err != nil {
						b.Fatal(err)
					}
					size = len(body)
				}
				b.ReportMetric(float64(size), "payload-B")
			})
		}
	}
}

// beatInput is a cluster of records shaped like a real one: nodes in a few
// pools, pods spread over 200 namespaces with a realistic mix of phases,
// events spread over the last hour.
func beatInput(nodes, pods, events int) Input {
	in := Input{
		ClusterID: "demo.example.net", AgentVersion: "1.2.3", KubernetesVersion: "v1.35.5",
		Now: time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC),
	}
	for i := range nodes {
		n := &cluster.Node{
			Name: fmt.Sprintf("workers-%c-7f9c-%05d", 'a'+i%4, i), Status: "Ready", Ready: true,
			Roles: "worker", InstanceType: "cpx31", KubeletVersion: "v1.35.5", CPU: "4", Memory: "8148916Ki",
		}
		if i < 3 {
			n.Name, n.Roles, n.InstanceType = fmt.Sprintf("control-plane-%d", i), "control-plane", "cpx21"
		}
		in.Nodes = append(in.Nodes, n)
	}
	// The cache hands Build its pod counts (cluster's BenchmarkPodStore
	// measures counting them): of every 100 pods 90 Running, 4 Pending,
	// 4 Succeeded, 1 Failed, 1 Unknown, over 200 namespaces.
	in.Pods = wire.Pods{Total: pods, Running: pods * 90 / 100, Pending: pods * 4 / 100,
		Succeeded: pods * 4 / 100, Failed: pods / 100, Unknown: pods / 100}
	if pods > 0 {
		in.Pods.ByNamespace = map[string]int{}
		for i := range min(pods, 200) {
			in.Pods.ByNamespace[fmt.Sprintf("team-%03d", i)] = pods / 200
		}
	}
	for i := range events {
		in.Events = append(in.Events, &cluster.Event{
			Namespace: fmt.Sprintf("team-%03d", i%200), Name: fmt.Sprintf("svc-%03d.%016x", i%300, i),
			Reason: "BackOff", Kind: "Pod", Message: "Back-off restarting failed container app",
			Warning: true, Count: int32(1 + i%20), LastSeen: in.Now.Add(-time.Duration(i) * 3 * time.Second),
		})
	}
	return in
}
