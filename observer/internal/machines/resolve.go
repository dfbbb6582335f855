package machines

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"kubehz.dev/agent/shared/wire"
)

// UnknownPool is where issues of machines no MD claims are reported.
const UnknownPool = "unknown"

// resolver maps a Machine to the MachineDeployment (pool) that owns it.
type resolver struct {
	claiming []*MachineDeployment // non-nil selector, sorted by name
	exists   map[string]bool      // every named MD, for the owner fallback
}

func newResolver(mds []*MachineDeployment) resolver {
	r := resolver{exists: make(map[string]bool, len(mds))}
	for _, d := range mds {
		if d == nil || d.Name == "" {
			continue
		}
		r.exists[d.Name] = true
		if d.Selector != nil {
			r.claiming = append(r.claiming, d)
		}
	}
	// Sorted so that overlapping selectors resolve the same way every pass.
	slices.SortFunc(r.claiming, func(a, b *MachineDeployment) int { return cmp.Compare(a.Name, b.Name) })
	return r
}

// pool returns the owning MD's name: the first MD by name whose selector
// matches the Machine's labels, else the MD named after an owning MachineSet
// minus its last "-segment" (pool-a-6d8f9b7c4 → pool-a) if that MD exists.
// ok is false when nothing owns the machine.
func (r resolver) pool(m *Machine) (name string, ok bool) {
	set := labels.Set(m.Labels)
	for _, d := range r.claiming {
		if d.Selector.Matches(set) {
			return d.Name, true
		}
	}
	for _, ms := range m.MachineSets {
		i := strings.LastIndex(ms, "-")
		if i < 0 {
			continue
		}
		if md := ms[:i]; r.exists[md] {
			return md, true
		}
	}
	return "", false
}

// poolOrUnknown is pool for issue reporting: unresolved machines are unowned.
func (r resolver) poolOrUnknown(m *Machine) string {
	if name, ok := r.pool(m); ok {
		return name
	}
	return UnknownPool
}

// Pools lists each MachineDeployment's replicas and ready count, sorted by
// name; nil when there is none, so the key is omitted.
func Pools(mds []*MachineDeployment) []wire.Pool {
	var out []wire.Pool
	for _, d := range mds {
		if d == nil || d.Name == "" {
			continue
		}
		out = append(out, wire.Pool{
			Name:     wire.Clamp(d.Name, wire.MaxNameLen),
			Replicas: d.Replicas,
			Ready:    d.Ready,
			APIGroup: APIGroup,
		})
	}
	slices.SortFunc(out, func(a, b wire.Pool) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
