package cluster

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
)

// BenchmarkPodStore prints what holding the cluster's pods costs once the
// full objects are gone, per pod: in the observer's counting store
// (store-B/pod), in a map from each pod's key to its phase (keys-B/pod, the
// layout before the keys were hashed) and in client-go's store holding the
// same compact records (informer-B/pod), each filled the way the reflector
// fills it. ns/op is one beat's count of every pod by phase and namespace.
func BenchmarkPodStore(b *testing.B) {
	for _, n := range []int{5_000, 150_000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			records := func() []any {
				out := make([]any, n)
				for i := range out {
					p, err := podTransform(decodedPodPhase(i)) // the decoded pod is garbage at once
					if err != nil {
						b.Fatal(err)
					}
					out[i] = p
				}
				return out
			}

			base := liveHeap(b)
			informer := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
			if err := informer.Replace(records(), "1"); err != nil {
				b.Fatal(err)
			}
			perInformer := float64(liveHeap(b)-base) / float64(n)
			runtime.KeepAlive(informer)
			informer = nil

			base = liveHeap(b)
			keys := map[string]Phase{}
			for _, r := range records() {
				keys[r.(*Pod).Key] = r.(*Pod).Phase
			}
			perKey := float64(liveHeap(b)-base) / float64(n)
			runtime.KeepAlive(keys) // and no later: the store's figure does not carry it

			base = liveHeap(b)
			store := newPodStore(func() {})
			if err := store.Replace(records(), "1"); err != nil {
				b.Fatal(err)
			}
			perStore := float64(liveHeap(b)-base) / float64(n)

			b.ReportAllocs()
			for b.Loop() {
				if got := store.Summary(true); got.Total != n {
					b.Fatalf("counted %d pods, want %d", got.Total, n)
				}
			}
			b.ReportMetric(perStore, "store-B/pod")
			b.ReportMetric(perKey, "keys-B/pod")
			b.ReportMetric(perInformer, "informer-B/pod")
		})
	}
}

// BenchmarkDecode prints what decoding one pod, node or Warning event of
// the harness's shape costs: as client-go's generated decoder reads it
// (full) and as the observer's clients do (kubeapi's partial decoders, which
// keep the fields the heartbeat reads and step over the rest).
func BenchmarkDecode(b *testing.B) {
	encode := func(obj interface{ Marshal() ([]byte, error) }) []byte {
		data, err := obj.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	pods, nodes, events := make([][]byte, 1000), make([][]byte, 1000), make([][]byte, 1000)
	for i := range 1000 {
		pods[i], nodes[i], events[i] = encode(benchPod(i)), encode(benchNode(i)), encode(benchEvent(i))
	}
	decoders := []struct {
		name    string
		encoded [][]byte
		decode  func([]byte) error
	}{
		{"pod/full", pods, func(data []byte) error { return new(corev1.Pod).Unmarshal(data) }},
		{"pod/phase", pods, func(data []byte) error { return new(kubeapi.PodPhase).Unmarshal(data) }},
		{"node/full", nodes, func(data []byte) error { return new(corev1.Node).Unmarshal(data) }},
		{"node/partial", nodes, func(data []byte) error { return new(kubeapi.Node).Unmarshal(data) }},
		{"event/full", events, func(data []byte) error { return new(corev1.Event).Unmarshal(data) }},
		{"event/partial", events, func(data []byte) error { return new(kubeapi.Event).Unmarshal(data) }},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := d.decode(d.encoded[i%len(d.encoded)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
