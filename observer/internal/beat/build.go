package beat

import (
	"sort"
	"strings"
	"time"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

// EventsKept is how many Warning events a beat carries, newest first. It is
// the observer's own choice, below the platform's bound on the list
// (wire.MaxEvents), which the cap pass enforces.
const EventsKept = 20

// Input is everything one beat is built from, each source's view as of Now.
type Input struct {
	ClusterID         string
	AgentVersion      string
	KubernetesVersion string // the apiserver's gitVersion; "" until discovery answers
	Now               time.Time
	ReportNamespaces  bool // privacy gate: byNamespace, event namespace and note

	// The informer cache's records, which Build maps to the wire.
	Nodes  []*cluster.Node
	Pods   wire.Pods // counted by the cache, which keeps no pod records
	Events []*cluster.Event

	// The other sources hand over wire shapes already; Build only caps them.

	// Actions are the actor's reports, nil while its Lease is stale: with no
	// live actor the key is absent, which the platform reads as "clear".
	Actions       []wire.Action
	Inventory     *wire.Inventory // nil: no ClusterInventory to mirror
	MachineIssues []wire.MachineIssue
	Pools         []wire.Pool
	Components    []wire.Component
	Certificates  *wire.Certificates
}

// Build assembles the payload and runs the cap pass over it: the result is
// exactly what the observer encodes and sends. It is pure: the same input
// gives the same payload, so every rule of the wire contract is pinned by
// table tests.
func Build(in Input) wire.Payload {
	p := wire.Payload{
		Schema:        wire.Schema,
		ClusterID:     in.ClusterID,
		Timestamp:     Timestamp(in.Now),
		Agent:         wire.Agent{Version: in.AgentVersion, Mode: wire.ModeOperator},
		Kubernetes:    wire.Kubernetes{Version: in.KubernetesVersion},
		Nodes:         nodes(in.Nodes),
		Workloads:     wire.Workloads{Pods: pods(in.Pods, in.ReportNamespaces)},
		Events:        events(in.Events, in.ReportNamespaces),
		Actions:       in.Actions,
		Inventory:     in.Inventory,
		MachineIssues: in.MachineIssues,
		Pools:         in.Pools,
		Components:    in.Components,
		Certificates:  in.Certificates,
	}
	p.Cap()
	return p
}

// Timestamp renders t as the wire wants it: UTC, whole seconds, Z suffix.
func Timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func nodes(recs []*cluster.Node) []wire.Node {
	out := make([]wire.Node, 0, len(recs)) // never nil: the platform 400s on null
	for _, r := range recs {
		if r == nil {
			continue
		}
		n := wire.Node{
			Name:           r.Name,
			Status:         r.Status,
			Ready:          r.Ready,
			Roles:          r.Roles,
			InstanceType:   r.InstanceType,
			KubeletVersion: r.KubeletVersion,
		}
		if r.CPU != "" || r.Memory != "" {
			n.Capacity = &wire.Capacity{CPU: r.CPU, Memory: r.Memory}
		}
		out = append(out, n)
	}
	// Unsorted here: the cap pass sorts by name after clamping, so that
	// truncation and the wire order are deterministic (docs/contract.md#g-4).
	return out
}

// pods drops the namespace counts unless namespaces may leave the cluster;
// the cache only counts them when asked, this is the gate's second lock.
func pods(p wire.Pods, byNamespace bool) wire.Pods {
	if !byNamespace || len(p.ByNamespace) == 0 {
		p.ByNamespace = nil
	}
	return p
}

func events(recs []*cluster.Event, reportNamespaces bool) []wire.Event {
	warnings := make([]*cluster.Event, 0, len(recs))
	for _, r := range recs {
		if r != nil && r.Warning {
			warnings = append(warnings, r)
		}
	}
	// Newest first; equal times fall back to the name, descending, so the
	// order never depends on the cache's iteration order.
	sort.Slice(warnings, func(i, j int) bool {
		a, b := warnings[i], warnings[j]
		if !a.LastSeen.Equal(b.LastSeen) {
			return a.LastSeen.After(b.LastSeen)
		}
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name) > 0
		}
		return a.Namespace > b.Namespace
	})
	if len(warnings) > EventsKept {
		warnings = warnings[:EventsKept]
	}
	if len(warnings) == 0 {
		return nil // an empty list is dropped from the beat
	}
	out := make([]wire.Event, 0, len(warnings))
	for _, r := range warnings {
		e := wire.Event{Reason: r.Reason, Kind: r.Kind, Count: r.Count, LastSeen: Timestamp(r.LastSeen)}
		if reportNamespaces {
			e.Namespace, e.Note = r.Namespace, r.Message
		}
		out = append(out, e)
	}
	return out
}
