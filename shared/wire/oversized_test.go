package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// oversized builds a payload over every bound, with strings that mix
// one-unit, two-unit and invalid code points, and nodes in reverse order.
// Each call returns fresh, identical memory.
func oversized() wire.Payload {
	s := strings.Repeat("é€\U0001F600\xff", 100) // 500 units, 4 kinds of rune
	p := wire.Payload{
		Schema: wire.Schema, ClusterID: s, Timestamp: s,
		Agent: wire.Agent{Version: s, Mode: s}, Kubernetes: wire.Kubernetes{Version: s},
		Workloads: wire.Workloads{Pods: wire.Pods{ByNamespace: map[string]int{}}},
		Inventory: &wire.Inventory{
			Lok8sVersion: s, Kind: s, Provider: s, KubernetesVersion: s, SpecHash: s, RenderedAt: s,
		},
		Certificates: &wire.Certificates{ExpiresAt: s},
	}
	for i := 700; i > 0; i-- {
		p.Nodes = append(p.Nodes, wire.Node{
			Name: fmt.Sprintf("node-%04d-%s", i, s), Status: s, Roles: s, InstanceType: s, KubeletVersion: s,
		})
		p.Workloads.Pods.ByNamespace[fmt.Sprintf("ns-%04d", i)] = i
	}
	for i := range 150 {
		id := fmt.Sprintf("%03d-%s", i, s)
		p.Components = append(p.Components, wire.Component{Name: id, Status: s})
		p.Events = append(p.Events, wire.Event{Reason: id, Kind: s, LastSeen: s, Namespace: s, Note: s})
		p.Actions = append(p.Actions, wire.Action{Type: s, Target: id, Status: s, Detail: s, Revision: int64(i)})
		p.MachineIssues = append(p.MachineIssues, wire.MachineIssue{Pool: id, Machine: s, Reason: s, Message: s, Since: s})
		p.Inventory.Addons = append(p.Inventory.Addons, wire.Addon{Name: id, ChartVersion: s, AppVersion: s, Category: s, Source: s})
		p.Pools = append(p.Pools, wire.Pool{Name: id, MachineType: s, APIGroup: s})
	}
	return p
}

func TestCap_TruncatesOversizedPayload(t *testing.T) {
	p := oversized()
	p.Cap()
	checkBounds(t, &p)

	lengths := []struct {
		name      string
		got, want int
	}{
		{"nodes", len(p.Nodes), 500},
		{"components", len(p.Components), 50},
		{"events", len(p.Events), 50},
		{"actions", len(p.Actions), 20},
		{"machineIssues", len(p.MachineIssues), 20},
		{"addons", len(p.Inventory.Addons), 100},
		{"pools", len(p.Pools), 100},
		{"byNamespace", len(p.Workloads.Pods.ByNamespace), 500},
		// s repeats 5 units (é, €, two for 😀, one for the U+FFFD of \xff);
		// where 😀 would straddle a cap it goes whole, leaving one unit free.
		{"clusterId units", utf16Len(p.ClusterID), 253 - 1},
		{"node name units", utf16Len(p.Nodes[0].Name), 253 - 1},
		{"action detail units", utf16Len(p.Actions[0].Detail), 256},
		{"agent mode units", utf16Len(p.Agent.Mode), 63 - 1},
	}
	for _, l := range lengths {
		if l.got != l.want {
			t.Errorf("%s = %d, want %d", l.name, l.got, l.want)
		}
	}

	// The smallest names and keys survive, whatever the input order.
	if first, last := p.Nodes[0].Name[:9], p.Nodes[499].Name[:9]; first != "node-0001" || last != "node-0500" {
		t.Errorf("nodes run %s..%s, want node-0001..node-0500", first, last)
	}
	byNS := p.Workloads.Pods.ByNamespace
	if _, ok := byNS["ns-0500"]; !ok {
		t.Error("byNamespace lost ns-0500, one of the 500 smallest keys")
	}
	if _, ok := byNS["ns-0501"]; ok {
		t.Error("byNamespace kept ns-0501, beyond the 500 smallest keys")
	}
	// Lists without a natural order keep the producer's first entries.
	if p.Actions[19].Revision != 19 || p.Events[49].Reason[:3] != "049" {
		t.Errorf("kept actions up to revision %d and events up to %s, want 19 and 049",
			p.Actions[19].Revision, p.Events[49].Reason[:3])
	}
}

func TestCap_IsIdempotent(t *testing.T) {
	p := oversized()
	p.Cap()
	once := mustMarshal(t, &p)
	p.Cap()
	if twice := mustMarshal(t, &p); !bytes.Equal(once, twice) {
		t.Fatal("second Cap changed the JSON")
	}
	// The payload the platform decodes is itself already capped.
	var decoded wire.Payload
	if err := json.Unmarshal(once, &decoded); err != nil {
		t.Fatal(err)
	}
	decoded.Cap()
	if again := mustMarshal(t, &decoded); !bytes.Equal(once, again) {
		t.Fatal("Cap of the decoded JSON changed it")
	}
}

// Producers share their snapshots between beats, so Cap must copy rather
// than clamp, sort or filter in place.
func TestCap_LeavesProducerMemoryUntouched(t *testing.T) {
	src := oversized()
	p := src // shallow: shares every slice, map and pointer with src
	p.Cap()
	if !reflect.DeepEqual(src, oversized()) {
		t.Fatal("Cap wrote through to memory the payload only referenced")
	}
}

func mustMarshal(t testing.TB, p *wire.Payload) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
