package wire_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"kubehz.dev/agent/shared/wire"
)

// utf16Len counts what zod's .max() counts. It is written independently of
// the package's own arithmetic so the tests do not grade their own homework.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// validize replaces each invalid byte with U+FFFD the way encoding/json does,
// giving the string the platform would receive.
func validize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// checkBounds fails t for every field of a capped payload that the platform
// would reject.
func checkBounds(t testing.TB, p *wire.Payload) {
	t.Helper()
	str := func(field, s string, limit int) {
		t.Helper()
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", field, s)
		}
		if n := utf16Len(s); n > limit {
			t.Errorf("%s has %d UTF-16 units, bound %d", field, n, limit)
		}
	}
	list := func(field string, n, limit int) {
		t.Helper()
		if n > limit {
			t.Errorf("%s has %d entries, bound %d", field, n, limit)
		}
	}
	count := func(field string, n int64) {
		t.Helper()
		if n < 0 || n > 10_000_000 {
			t.Errorf("%s = %d, outside 0..%d", field, n, 10_000_000)
		}
	}

	str("clusterId", p.ClusterID, 253)
	str("timestamp", p.Timestamp, 64)
	str("agent.version", p.Agent.Version, 64)
	str("agent.mode", p.Agent.Mode, 63)
	str("kubernetes.version", p.Kubernetes.Version, 64)

	if p.Nodes == nil {
		t.Error("nodes is nil and would encode as null")
	}
	list("nodes", len(p.Nodes), 500)
	if !slices.IsSortedFunc(p.Nodes, func(a, b wire.Node) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("nodes are not sorted by name")
	}
	for _, n := range p.Nodes {
		str("node.name", n.Name, 253)
		str("node.status", n.Status, 63)
		str("node.roles", n.Roles, 253)
		str("node.instanceType", n.InstanceType, 64)
		str("node.kubeletVersion", n.KubeletVersion, 64)
	}

	list("components", len(p.Components), 50)
	for _, c := range p.Components {
		str("component.name", c.Name, 253)
		str("component.status", c.Status, 63)
	}

	pods := p.Workloads.Pods
	for _, n := range []int{pods.Total, pods.Running, pods.Pending, pods.Failed, pods.Succeeded, pods.Unknown} {
		count("pods counter", int64(n))
	}
	list("byNamespace", len(pods.ByNamespace), 500)
	for _, n := range pods.ByNamespace {
		count("byNamespace value", int64(n))
	}

	list("events", len(p.Events), 50)
	for _, e := range p.Events {
		str("event.reason", e.Reason, 63)
		str("event.kind", e.Kind, 63)
		str("event.lastSeen", e.LastSeen, 64)
		str("event.namespace", e.Namespace, 253)
		str("event.note", e.Note, 256)
		count("event.count", int64(e.Count))
	}

	if p.Actions != nil && len(p.Actions) == 0 {
		t.Error("actions is empty but not nil, so the key would not clear")
	}
	list("actions", len(p.Actions), 20)
	for _, a := range p.Actions {
		if a.Target == "" {
			t.Error("action with empty target")
		}
		str("action.type", a.Type, 63)
		str("action.target", a.Target, 253)
		str("action.status", a.Status, 63)
		str("action.detail", a.Detail, 256)
		count("action.revision", a.Revision)
	}

	if p.MachineIssues != nil && len(p.MachineIssues) == 0 {
		t.Error("machineIssues is empty but not nil, so the key would not clear")
	}
	list("machineIssues", len(p.MachineIssues), 20)
	for _, m := range p.MachineIssues {
		if m.Pool == "" || m.Reason == "" {
			t.Errorf("machine issue with empty pool or reason: %+v", m)
		}
		str("issue.pool", m.Pool, 63)
		str("issue.machine", m.Machine, 253)
		str("issue.reason", m.Reason, 63)
		str("issue.message", m.Message, 256)
		str("issue.since", m.Since, 64)
	}

	if inv := p.Inventory; inv != nil {
		str("inventory.lok8sVersion", inv.Lok8sVersion, 64)
		str("inventory.kind", inv.Kind, 63)
		str("inventory.provider", inv.Provider, 63)
		str("inventory.kubernetesVersion", inv.KubernetesVersion, 64)
		str("inventory.specHash", inv.SpecHash, 64)
		str("inventory.renderedAt", inv.RenderedAt, 64)
		list("inventory.addons", len(inv.Addons), 100)
		for _, a := range inv.Addons {
			if a.Name == "" {
				t.Error("addon with empty name")
			}
			str("addon.name", a.Name, 253)
			str("addon.chartVersion", a.ChartVersion, 64)
			str("addon.appVersion", a.AppVersion, 64)
			str("addon.category", a.Category, 63)
			str("addon.source", a.Source, 63)
		}
	}

	list("pools", len(p.Pools), 100)
	for _, pl := range p.Pools {
		str("pool.name", pl.Name, 253)
		str("pool.machineType", pl.MachineType, 64)
		str("pool.apiGroup", pl.APIGroup, 253)
		count("pool.replicas", int64(pl.Replicas))
		count("pool.ready", int64(pl.Ready))
	}
	if c := p.Certificates; c != nil {
		str("certificates.expiresAt", c.ExpiresAt, 64)
	}
}
