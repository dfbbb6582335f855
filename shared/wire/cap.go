package wire

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Cap forces p inside the platform's bounds. Run it on every
// payload just before it is enqueued; it is idempotent.
//
// Cap never writes through p's slices, maps or pointers. Producers hand out
// snapshots they may share with other beats (the inventory manager's, the
// action store's), so every list or object Cap touches is replaced by a copy.
//
// Beyond the platform's bounds (docs/contract.md#heartbeat-caps) it also
// sorts nodes by name before truncating (docs/contract.md#g-4), so the 500
// that survive and their order do not depend on lister order; keeps nodes as
// [] rather than null; pins every count-like integer into 0..MaxCount; clamps
// lastSeen, certificates and pools like the other timestamps and names; and
// drops nameless addons, which the inventory reader already skips.
func (p *Payload) Cap() {
	clampTo(MaxNameLen, &p.ClusterID)
	clampTo(MaxLabelLen, &p.Agent.Mode)
	clampTo(MaxVersionLen, &p.Timestamp, &p.Agent.Version, &p.Kubernetes.Version)

	p.Nodes = capNodes(p.Nodes)
	p.Components = capList(p.Components, MaxComponents, nil, capComponent)
	p.Workloads.Pods = capPods(p.Workloads.Pods)
	p.Events = capList(p.Events, MaxEvents, nil, capEvent)

	// An empty list must go out as no key at all: the platform reads absence
	// as "clear", and an empty target or pool would 400 the beat.
	p.Actions = nilIfEmpty(capList(p.Actions, MaxActions,
		func(a Action) bool { return a.Target != "" }, capAction))
	p.MachineIssues = nilIfEmpty(capList(p.MachineIssues, MaxMachineIssues,
		func(m MachineIssue) bool { return m.Pool != "" && m.Reason != "" }, capMachineIssue))

	if p.Inventory != nil {
		p.Inventory = capInventory(*p.Inventory)
	}
	p.Pools = capList(p.Pools, MaxPools, nil, capPool)
	if p.Certificates != nil {
		c := Certificates{ExpiresAt: Clamp(p.Certificates.ExpiresAt, MaxVersionLen)}
		p.Certificates = &c
	}
}

// capList copies the first limit entries of in that keep accepts, each
// clamped first, so that a filter on emptiness also sees what clamping left.
// It keeps nil as nil and empty as empty.
func capList[T any](in []T, limit int, keep func(T) bool, clamp func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, 0, min(len(in), limit))
	for _, v := range in {
		if len(out) == limit {
			break
		}
		if v = clamp(v); keep == nil || keep(v) {
			out = append(out, v)
		}
	}
	return out
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func capNodes(in []Node) []Node {
	// Sort the clamped names, not the raw ones: clamping can swap two names
	// that differ only past the cap, and a second Cap must find them sorted.
	// Ties fall back to input position, so duplicate names keep the
	// producer's order and Cap stays idempotent even then. Sorting small
	// keys rather than whole nodes keeps a 5000-node beat cheap.
	type key struct {
		name string
		at   int
	}
	keys := make([]key, len(in))
	for i, n := range in {
		keys[i] = key{Clamp(n.Name, MaxNameLen), i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.at, b.at))
	})
	out := make([]Node, min(len(keys), MaxNodes)) // never nil: the platform 400s on "nodes": null
	for i := range out {
		out[i] = capNode(in[keys[i].at])
	}
	return out
}

// clampTo clamps each field to limit. The cap functions below list their
// fields by bound, so which bound a field gets reads at a glance.
func clampTo(limit int, fields ...*string) {
	for _, f := range fields {
		*f = Clamp(*f, limit)
	}
}

func capNode(n Node) Node {
	clampTo(MaxNameLen, &n.Name, &n.Roles)
	clampTo(MaxLabelLen, &n.Status)
	clampTo(MaxVersionLen, &n.InstanceType, &n.KubeletVersion)
	return n
}

func capComponent(c Component) Component {
	clampTo(MaxNameLen, &c.Name)
	clampTo(MaxLabelLen, &c.Status)
	return c
}

func capEvent(e Event) Event {
	clampTo(MaxNameLen, &e.Namespace)
	clampTo(MaxLabelLen, &e.Reason, &e.Kind)
	clampTo(MaxVersionLen, &e.LastSeen)
	clampTo(MaxNoteLen, &e.Note)
	e.Count = int32(clampCount(int64(e.Count)))
	return e
}

func capAction(a Action) Action {
	clampTo(MaxNameLen, &a.Target)
	clampTo(MaxLabelLen, &a.Type, &a.Status)
	clampTo(MaxNoteLen, &a.Detail)
	a.Revision = clampCount(a.Revision)
	return a
}

func capMachineIssue(m MachineIssue) MachineIssue {
	clampTo(MaxNameLen, &m.Machine)
	clampTo(MaxLabelLen, &m.Pool, &m.Reason) // the pool's 63, not 253: the platform's bound
	clampTo(MaxVersionLen, &m.Since)
	clampTo(MaxNoteLen, &m.Message)
	return m
}

func capInventory(inv Inventory) *Inventory {
	clampTo(MaxLabelLen, &inv.Kind, &inv.Provider)
	clampTo(MaxVersionLen, &inv.Lok8sVersion, &inv.KubernetesVersion, &inv.SpecHash, &inv.RenderedAt)
	inv.Addons = capList(inv.Addons, MaxAddons, func(a Addon) bool { return a.Name != "" }, capAddon)
	return &inv
}

func capAddon(a Addon) Addon {
	clampTo(MaxNameLen, &a.Name)
	clampTo(MaxLabelLen, &a.Category, &a.Source)
	clampTo(MaxVersionLen, &a.ChartVersion, &a.AppVersion)
	return a
}

func capPool(p Pool) Pool {
	clampTo(MaxNameLen, &p.Name, &p.APIGroup)
	clampTo(MaxVersionLen, &p.MachineType)
	p.Replicas = int(clampCount(int64(p.Replicas)))
	p.Ready = int(clampCount(int64(p.Ready)))
	return p
}

func capPods(p Pods) Pods {
	for _, n := range []*int{&p.Total, &p.Running, &p.Pending, &p.Failed, &p.Succeeded, &p.Unknown} {
		*n = int(clampCount(int64(*n)))
	}
	p.ByNamespace = capNamespaces(p.ByNamespace)
	return p
}

// capNamespaces keeps the lexicographically smallest keys, so which
// namespaces survive does not depend on map iteration order.
func capNamespaces(in map[string]int) map[string]int {
	if in == nil {
		return nil
	}
	keys := slices.Collect(maps.Keys(in))
	if len(keys) > MaxNamespaces {
		slices.Sort(keys)
		keys = keys[:MaxNamespaces]
	}
	out := make(map[string]int, len(keys))
	for _, k := range keys {
		out[k] = int(clampCount(int64(in[k])))
	}
	return out
}

func clampCount(n int64) int64 { return min(max(n, 0), MaxCount) }
