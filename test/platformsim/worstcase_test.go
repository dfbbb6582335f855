package platformsim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// The agent's cap pass and the platform's validator are written apart, from
// the same contract. A payload over every bound, capped by the agent, must
// be accepted whole: one field the cap pass misses would 400 every beat.
func TestHeartbeat_CappedWorstCasePayloadIsAccepted(t *testing.T) {
	// 500 UTF-16 units of one-unit, two-unit and invalid code points.
	s := strings.Repeat("é€"+emoji+"\xff", 100)
	p := wire.Payload{
		Schema: wire.Schema, ClusterID: s, Timestamp: s,
		Agent: wire.Agent{Version: s, Mode: "operator"}, Kubernetes: wire.Kubernetes{Version: s},
		Workloads:    wire.Workloads{Pods: wire.Pods{Total: 1 << 40, Running: -5, ByNamespace: map[string]int{}}},
		Inventory:    &wire.Inventory{Lok8sVersion: s, Kind: s, Provider: s, KubernetesVersion: s, SpecHash: s, RenderedAt: s},
		Certificates: &wire.Certificates{ExpiresAt: s},
	}
	for i := range 700 {
		p.Nodes = append(p.Nodes, wire.Node{Name: fmt.Sprintf("n%04d-%s", i, s), Status: "NotReady", Roles: s, InstanceType: s, KubeletVersion: s})
		p.Workloads.Pods.ByNamespace[fmt.Sprintf("ns-%04d-%s", i, s)] = 1 << 40
	}
	for i := range 150 {
		id := fmt.Sprintf("%03d-%s", i, s)
		p.Components = append(p.Components, wire.Component{Name: id, Status: s})
		p.Events = append(p.Events, wire.Event{Reason: id, Kind: s, Count: -7, LastSeen: s, Namespace: s, Note: s})
		p.Actions = append(p.Actions, wire.Action{Type: "heal", Target: id, Status: "in-progress", Detail: s, Revision: 1 << 40})
		p.MachineIssues = append(p.MachineIssues, wire.MachineIssue{Pool: id, Machine: s, Reason: s, Message: s, Since: s})
		p.Inventory.Addons = append(p.Inventory.Addons, wire.Addon{Name: id, ChartVersion: s, AppVersion: s, Category: s, Source: s})
		p.Pools = append(p.Pools, wire.Pool{Name: id, MachineType: s, APIGroup: s})
	}
	p.Cap()

	h := start(t, Options{})
	got := h.must(http.MethodPost, beatPath, DefaultToken, marshal(t, p), nil)
	if got.status != http.StatusOK {
		t.Fatalf("capped worst case answered %d: %s", got.status, got.body)
	}
	// The caps the contract names, as numbers: the cap pass kept the most
	// the platform accepts, not less.
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"nodes", len(p.Nodes), 500}, {"components", len(p.Components), 50}, {"events", len(p.Events), 50},
		{"actions", len(p.Actions), 20}, {"machineIssues", len(p.MachineIssues), 20},
		{"addons", len(p.Inventory.Addons), 100}, {"byNamespace", len(p.Workloads.Pods.ByNamespace), 500},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d after the cap pass, want %d", c.name, c.got, c.want)
		}
	}
}
