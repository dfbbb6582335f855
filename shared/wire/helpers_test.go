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
		if n < 0 || n > wire.MaxCount {
			t.Errorf("%s = %d, outside 0..%d", field, n, wire.MaxCount)
		}
	}

	str("clusterId", p.ClusterID, wire.MaxNameLen)
	str("timestamp", p.Timestamp, wire.MaxVersionLen)
	str("agent.version", p.Agent.Version, wire.MaxVersionLen)
	str("agent.mode", p.Agent.Mode, wire.MaxLabelLen)
	str("kubernetes.version", p.Kubernetes.Version, wire.MaxVersionLen)

	if p.Nodes == nil {
		t.Error("nodes is nil and would encode as null")
	}
	list("nodes", len(p.Nodes), wire.MaxNodes)
	if !slices.IsSortedFunc(p.Nodes, func(a, b wire.Node) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("nodes are not sorted by name")
	}
	for _, n := range p.Nodes {
		str("node.name", n.Name, wire.MaxNameLen)
		str("node.status", n.Status, wire.MaxLabelLen)
		str("node.roles", n.Roles, wire.MaxNameLen)
		str("node.instanceType", n.InstanceType, wire.MaxVersionLen)
		str("node.kubeletVersion", n.KubeletVersion, wire.MaxVersionLen)
	}

	list("components", len(p.Components), wire.MaxComponents)
	for _, c := range p.Components {
		str("component.name", c.Name, wire.MaxNameLen)
		str("component.status", c.Status, wire.MaxLabelLen)
	}

	pods := p.Workloads.Pods
	for _, n := range []int{pods.Total, pods.Running, pods.Pending, pods.Failed, pods.Succeeded, pods.Unknown} {
		count("pods counter", int64(n))
	}
	list("byNamespace", len(pods.ByNamespace), wire.MaxNamespaces)
	for _, n := range pods.ByNamespace {
		count("byNamespace value", int64(n))
	}

	list("events", len(p.Events), wire.MaxEvents)
	for _, e := range p.Events {
		str("event.reason", e.Reason, wire.MaxLabelLen)
		str("event.kind", e.Kind, wire.MaxLabelLen)
		str("event.lastSeen", e.LastSeen, wire.MaxVersionLen)
		str("event.namespace", e.Namespace, wire.MaxNameLen)
		str("event.note", e.Note, wire.MaxNoteLen)
		count("event.count", int64(e.Count))
	}

	if p.Actions != nil && len(p.Actions) == 0 {
		t.Error("actions is empty but not nil, so the key would not clear")
	}
	list("actions", len(p.Actions), wire.MaxActions)
	for _, a := range p.Actions {
		if a.Target == "" {
			t.Error("action with empty target")
		}
		str("action.type", a.Type, wire.MaxLabelLen)
		str("action.target", a.Target, wire.MaxNameLen)
		str("action.status", a.Status, wire.MaxLabelLen)
		str("action.detail", a.Detail, wire.MaxNoteLen)
		count("action.revision", a.Revision)
	}

	if p.MachineIssues != nil && len(p.MachineIssues) == 0 {
		t.Error("machineIssues is empty but not nil, so the key would not clear")
	}
	list("machineIssues", len(p.MachineIssues), wire.MaxMachineIssues)
	for _, m := range p.MachineIssues {
		if m.Pool == "" || m.Reason == "" {
			t.Errorf("machine issue with empty pool or reason: %+v", m)
		}
		str("issue.pool", m.Pool, wire.MaxLabelLen)
		str("issue.machine", m.Machine, wire.MaxNameLen)
		str("issue.reason", m.Reason, wire.MaxLabelLen)
		str("issue.message", m.Message, wire.MaxNoteLen)
		str("issue.since", m.Since, wire.MaxVersionLen)
	}

	if inv := p.Inventory; inv != nil {
		str("inventory.lok8sVersion", inv.Lok8sVersion, wire.MaxVersionLen)
		str("inventory.kind", inv.Kind, wire.MaxLabelLen)
		str("inventory.provider", inv.Provider, wire.MaxLabelLen)
		str("inventory.kubernetesVersion", inv.KubernetesVersion, wire.MaxVersionLen)
		str("inventory.specHash", inv.SpecHash, wire.MaxVersionLen)
		str("inventory.renderedAt", inv.RenderedAt, wire.MaxVersionLen)
		list("inventory.addons", len(inv.Addons), wire.MaxAddons)
		for _, a := range inv.Addons {
			if a.Name == "" {
				t.Error("addon with empty name")
			}
			str("addon.name", a.Name, wire.MaxNameLen)
			str("addon.chartVersion", a.ChartVersion, wire.MaxVersionLen)
			str("addon.appVersion", a.AppVersion, wire.MaxVersionLen)
			str("addon.category", a.Category, wire.MaxLabelLen)
			str("addon.source", a.Source, wire.MaxLabelLen)
		}
	}

	list("pools", len(p.Pools), wire.MaxPools)
	for _, pl := range p.Pools {
		str("pool.name", pl.Name, wire.MaxNameLen)
		str("pool.machineType", pl.MachineType, wire.MaxVersionLen)
		str("pool.apiGroup", pl.APIGroup, wire.MaxNameLen)
		count("pool.replicas", int64(pl.Replicas))
		count("pool.ready", int64(pl.Ready))
	}
	if c := p.Certificates; c != nil {
		str("certificates.expiresAt", c.ExpiresAt, wire.MaxVersionLen)
	}
}
