package upgrade

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"kubehz.dev/agent/actor/internal/refuse"
)

// poolState is what one pool looks like before any decision
// (docs/contract.md#upgrade-decisions).
type poolState struct {
	name          string
	md            MD
	hasMD         bool
	atTarget      bool // the MD's kubelet reads as the target's version
	n, m          int64
	converged     bool // atTarget and every expected machine runs the target
	cpReason      string
	autoscalerKey string
	machines      []Machine // every machine resolved to the pool, deleting ones too
	claimed       []Machine // every machine that could belong to the pool (claims)
}

// rolling says the pool is being rolled by machine-controller right now: its
// MD is at target but its machines are not all there yet. Control-plane and
// autoscaler pools are never ours to roll, so they never block the others.
func (s poolState) rolling() bool {
	return s.hasMD && s.atTarget && !s.converged && s.cpReason == "" && s.autoscalerKey == ""
}

// observe reads each pool's MD and machines against the target; a nil want
// (a refused target) leaves every pool off target.
func observe(names []string, o Observed, want *version.Version) []poolState {
	byPool := make(map[string][]Machine)
	for _, mc := range o.Machines {
		if mc.Pool != "" {
			byPool[mc.Pool] = append(byPool[mc.Pool], mc)
		}
	}
	states := make([]poolState, 0, len(names))
	for _, name := range names {
		s := poolState{name: name, machines: byPool[name]}
		for _, mc := range o.Machines {
			if claims(mc, name) {
				s.claimed = append(s.claimed, mc)
			}
		}
		if md, ok := o.MDs[name]; ok {
			md.Name = name // the map key is the name that matched
			labels := md.PoolLabels
			labels.Name = name
			s.md, s.hasMD = md, true
			s.atTarget = equalVersion(md.Kubelet, want)
			s.n, s.m = progress(s.machines, md.Replicas, want)
			s.converged = s.atTarget && s.n >= s.m
			s.cpReason = refuse.ControlPlaneReason(labels)
			s.autoscalerKey = refuse.AutoscalerKey(md.Annotations)
		}
		states = append(states, s)
	}
	return states
}

// progress counts a pool's roll: m is the non-deleting machines, raised to at
// least spec.replicas so that a machine missing mid-roll never reads as
// convergence; n is those running the target on a joined node.
func progress(machines []Machine, replicas *int64, want *version.Version) (n, m int64) {
	for _, mc := range machines {
		if mc.Deleting {
			continue
		}
		m++
		if mc.NodeName != "" && equalVersion(mc.Kubelet, want) {
			n++
		}
	}
	if replicas != nil && *replicas > m {
		m = *replicas
	}
	return n, m
}

// live counts the machines that are not deleting. Over the pool's claims,
// it is every Machine a roll of the pool could take down, the ones
// several pools claim included.
func live(machines []Machine) int {
	n := 0
	for _, mc := range machines {
		if !mc.Deleting {
			n++
		}
	}
	return n
}

// derivedFrom is the "from" of a pool found mid-roll with nothing
// remembered, as after a restart: the kubelet of the pool's first machine by
// name that is not at target yet. A deleting machine counts, since the old
// machines are the ones being replaced. With no such machine it is the
// target itself.
func derivedFrom(machines []Machine, want *version.Version) string {
	sorted := slices.Clone(machines)
	slices.SortFunc(sorted, func(a, b Machine) int { return cmp.Compare(a.Name, b.Name) })
	for _, mc := range sorted {
		if mc.Kubelet != "" && !equalVersion(mc.Kubelet, want) {
			return mc.Kubelet
		}
	}
	return canonical(want)
}

// rollingPools returns, by name, the worker pools machine-controller is
// rolling, whatever the document asks: one of their machines, deleting ones
// too (an old machine not yet gone), runs a kubelet other than their
// MachineDeployment's, or names none; or this term rolled the pool, or saw
// it mid-roll (mem), and fewer of its live machines have joined than it
// should have (unsettled). Control-plane and autoscaler pools are never
// ours to roll and never block.
func rollingPools(o Observed, mem RolledFrom) []string {
	names := make([]string, 0, len(o.MDs))
	for name := range o.MDs {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []string
	for _, name := range names {
		md := o.MDs[name]
		labels := md.PoolLabels
		labels.Name = name
		if md.Kubelet == "" || refuse.ControlPlaneReason(labels) != "" || refuse.AutoscalerKey(md.Annotations) != "" {
			continue
		}
		// A machine naming no kubelet cannot be shown to be done.
		if slices.ContainsFunc(o.Machines, func(mc Machine) bool {
			return claims(mc, name) && (mc.Kubelet == "" || !sameSpelling(mc.Kubelet, md.Kubelet))
		}) || rolled(mem, name) && unsettled(o.Machines, name, md.Replicas) {
			out = append(out, name)
		}
	}
	return out
}

// rolled says this term rolled pool, or saw it mid-roll.
func rolled(mem RolledFrom, pool string) bool {
	_, ok := mem[pool]
	return ok
}

// unsettled says fewer of pool's live machines have joined (have a Node)
// than max(live machines, spec.replicas). That is the tail of a roll once
// its last old machine is gone, before the replacement joins: every machine
// left is spelt like the template, so only the count shows the roll, and
// it shows whether or not the document still names the pool at that
// target. A pool short of machines for another reason looks the same (one
// the cloud has no capacity for), which is why only a pool this term
// rolled is asked: any other would hold every roll in the cluster.
func unsettled(machines []Machine, pool string, replicas *int64) bool {
	var live, joined int64
	for _, mc := range machines {
		if mc.Pool != pool || mc.Deleting {
			continue
		}
		live++
		if mc.NodeName != "" {
			joined++
		}
	}
	want := live
	if replicas != nil {
		want = max(want, *replicas)
	}
	return joined < want
}

// claims reports whether pool is one the machine could belong to.
func claims(mc Machine, pool string) bool {
	if mc.Candidates == nil {
		return mc.Pool == pool
	}
	return slices.Contains(mc.Candidates, pool)
}

// sameSpelling compares two kubelet strings ignoring a leading "v". It
// decides whether machine-controller is still replacing a machine, and
// that follows the template's text, not the version it names: a Machine
// spelt otherwise than its MachineDeployment ("v1.35.6+k3s1" beside
// "v1.35.6") came from another template and is being replaced.
func sameSpelling(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}
