package machines

import (
	"cmp"
	"slices"

	"kubehz.dev/agent/shared/machinepool"
	"kubehz.dev/agent/shared/wire"
)

// UnknownPool is where issues of machines no MD claims are reported.
const UnknownPool = "unknown"

// resolver maps a Machine to the MachineDeployment (pool) that owns it.
type resolver struct{ machinepool.Resolver }

func newResolver(mds []*MachineDeployment) resolver {
	claims := make([]machinepool.Claim, 0, len(mds))
	for _, d := range mds {
		if d != nil {
			claims = append(claims, machinepool.Claim{Name: d.Name, Selector: d.Selector})
		}
	}
	return resolver{machinepool.NewResolver(claims)}
}

// pool returns the owning MD's name; ok is false when nothing owns m.
func (r resolver) pool(m *Machine) (name string, ok bool) {
	return r.Resolve(m.Labels, m.MachineSets)
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
