package execute

import (
	"context"
	"maps"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/actor/internal/scale"
	"kubehz.dev/agent/shared/machinepool"
)

// world is one read of what healing and upgrades decide on: the
// MachineDeployments, the Machines, the Nodes when healing reads them, and
// which pool could own each Machine.
type world struct {
	mds      map[string]*cluster.MachineDeployment
	machines []*cluster.Machine
	nodes    map[string]*cluster.Node
	resolver machinepool.Resolver
}

// source names the cache a read of the world failed on.
type source int

const (
	fromMDs source = iota
	fromMachines
	fromNodes
)

// readError is a failed read of the world: upgrades report a failed
// MachineDeployment read and a failed Machine read in different words.
type readError struct {
	from source
	err  error
}

func (r *readError) Error() string { return r.err.Error() }
func (r *readError) Unwrap() error { return r.err }

// ensure starts the caches a read needs and waits for their first lists.
// Each wait may take its sync timeout: progress is marked before each, so
// the liveness probe sees a pass that is moving.
func (e *Executor) ensure(ctx context.Context, nodes bool) error {
	e.step()
	if err := e.MDs.Ensure(e.Base, ctx); err != nil {
		return &readError{fromMDs, err}
	}
	e.step()
	if err := e.Machines.Ensure(e.Base, ctx); err != nil {
		return &readError{fromMachines, err}
	}
	if nodes {
		e.step()
		if err := e.Nodes.Ensure(e.Base, ctx); err != nil {
			return &readError{fromNodes, err}
		}
	}
	return nil
}

// cached reads the world from the caches ensure started.
func (e *Executor) cached(nodes bool) world {
	var nodeRecords map[string]*cluster.Node
	if nodes {
		nodeRecords = e.Nodes.List()
	}
	return newWorld(e.MDs.List(), e.Machines.List(), nodeRecords)
}

// fresh reads the world with direct Lists, MachineDeployments too: a pool's
// selector, control-plane and autoscaler marks decide which Machines may be
// deleted or rolled, and a cache whose watch broke serves its last state
// without saying so.
func (e *Executor) fresh(ctx context.Context, nodes bool) (world, error) {
	mds, err := e.MDs.Fresh(ctx)
	if err != nil {
		return world{}, &readError{fromMDs, err}
	}
	machines, err := e.Machines.Fresh(ctx)
	if err != nil {
		return world{}, &readError{fromMachines, err}
	}
	var nodeRecords map[string]*cluster.Node
	if nodes {
		if nodeRecords, err = e.Nodes.Fresh(ctx); err != nil {
			return world{}, &readError{fromNodes, err}
		}
	}
	return newWorld(mds, machines, nodeRecords), nil
}

func newWorld(mds map[string]*cluster.MachineDeployment, machines []*cluster.Machine, nodes map[string]*cluster.Node) world {
	claims := make([]machinepool.Claim, 0, len(mds))
	for _, r := range mds {
		claims = append(claims, machinepool.Claim{Name: r.Name, Selector: r.Selector})
	}
	return world{mds: mds, machines: machines, nodes: nodes, resolver: machinepool.NewResolver(claims)}
}

// owner is the one pool that could own m, or "" when none or several could:
// overlapping selectors, or a selector and a MachineSet owner that disagree,
// might dress a control-plane or autoscaler machine as a worker, so such a
// machine is treated as unowned and never deleted.
func (w world) owner(m *cluster.Machine) string {
	if c := w.resolver.Candidates(m.Labels, m.MachineSets); len(c) == 1 {
		return c[0]
	}
	return ""
}

// live counts, by pool, the Machines that are not deleting, as
// machine-controller counts them: under the pool their MachineSet owner
// names, not under another pool whose selector also matches (every owner
// reference counts, where the controller counts only the controlling one:
// a second reference can only raise a count). One with no such owner,
// which a MachineSet may yet adopt, counts for every pool whose selector
// matches it.
func (w world) live() map[string]int {
	n := make(map[string]int, len(w.mds))
	for _, m := range w.machines {
		if m.Deleting {
			continue
		}
		pools := w.resolver.Owners(m.MachineSets)
		if len(pools) == 0 {
			pools = w.resolver.Candidates(m.Labels, nil)
		}
		for _, pool := range pools {
			n[pool]++
		}
	}
	return n
}

// takedowns is what the scale-downs and the roll of a pass take down before
// any read can show it. The heal of the same pass counts it as in flight,
// together with what machine-controller has yet to take down from before
// (in).
type takedowns struct {
	// rolled is, by pool, what the roll this pass started may take down at
	// once (upgrade.Patch.Removes).
	rolled map[string]int
	// scaled are the scale patches that may have landed
	// (refuse.MayHaveLanded): what they take down is counted against the
	// heal's own read of the Machines.
	scaled []scale.Patch
}

func (t *takedowns) add(p scale.Patch, sent bool, err error) {
	if refuse.MayHaveLanded(sent, err) {
		t.scaled = append(t.scaled, p)
	}
}

// in is the count against w: in each pool, what this pass's patches of it
// take down, or each live Machine past the spec.replicas w read, whichever
// is more. machine-controller has yet to take the latter down, whoever
// lowered the count and whenever: a scale-down of an earlier pass that it
// lags behind, a patch of this pass that did not land after all, a roll's
// surge. Only once it marks them deleting does a read show them in flight.
func (t takedowns) in(w world) int {
	live := w.live()
	patches := map[string]int{}
	maps.Copy(patches, t.rolled)
	for _, p := range t.scaled {
		patches[p.MD] += p.Removes(live[p.MD])
	}
	n := 0
	for name, r := range w.mds {
		past := 0
		if r.Replicas != nil {
			past = max(live[name]-int(max(*r.Replicas, 0)), 0)
		}
		n += max(past, patches[name])
		delete(patches, name)
	}
	for _, k := range patches { // a pool the read no longer shows
		n += k
	}
	return n
}

func poolLabels(r *cluster.MachineDeployment) refuse.PoolLabels {
	return refuse.PoolLabels{Name: r.Name, Labels: r.Labels, TemplateLabels: r.TemplateLabels,
		TemplateSpecMetaLabels: r.TemplateSpecMetaLabels, TemplateSpecLabels: r.TemplateSpecLabels}
}
