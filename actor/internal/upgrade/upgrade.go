// Package upgrade decides worker upgrades as a pure function. The desired
// kubelet version, the worker pools the document names, the
// MachineDeployments and Machines read from the cluster and the oldest
// control-plane version the executor has come to trust (ControlPlaneGate,
// cpversion.go) go in; the reports to store and at most one patch come out.
// It makes no client calls, reads no clock and logs nothing: the executor
// around it lists, writes and stores the reports.
//
// The planner rolls one pool at a time and only ever upward: it refuses a
// downgrade, a kubelet the version skew policy does not allow, control-plane
// pools and pools cluster-autoscaler owns. machine-controller performs the
// rolling replacement; the agent only sets spec.template.spec.versions.kubelet.
package upgrade

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/printable"
	"kubehz.dev/agent/shared/wire"
)

// MD is the compact record of one MachineDeployment that upgrades read.
type MD struct {
	Name, ResourceVersion string
	Kubelet               string            // spec.template.spec.versions.kubelet; "" when absent
	Replicas              *int64            // spec.replicas; nil when unknown
	PoolLabels            refuse.PoolLabels // name and label maps for refuse.ControlPlaneReason
	Annotations           map[string]string // metadata.annotations, for refuse.AutoscalerKey
	Rollout               Rollout           // spec.strategy
}

// Machine is the compact record of one Machine, already resolved to its pool
// by the caller.
type Machine struct {
	Name string
	Pool string // owning MD name, "" when unresolved or claimed by several
	// Candidates names every MD that could own the machine; nil means just
	// Pool. A machine claimed by several shows each of them rolling.
	Candidates []string
	Kubelet    string // spec.versions.kubelet
	NodeName   string // status.nodeRef.name; "" until the node has joined
	Deleting   bool
}

// Observed is what the executor read for this pass.
type Observed struct {
	MDs          map[string]MD // by name; nil together with MDsErr when the read failed
	MDsErr       error
	Machines     []Machine
	MachinesErr  error
	ControlPlane string // the oldest control-plane version read, once it held (ControlPlaneGate, cpversion.go); "" when unknown
	// ControlPlaneWhy says, when ControlPlane is "", why no version is
	// trusted (a source that cannot be read, or not yet stable); it goes
	// into the refusal so the owner sees the cause, not only the log.
	ControlPlaneWhy string
}

// Policy is what the pass acts under.
type Policy struct {
	Target    string   // trimmed kubernetesVersion; "" means nothing to do
	Pools     []string // pool names from the desired document, as given
	Namespace string   // MD namespace, named in details
	Revision  int64    // the desired revision every report carries
}

// RolledFrom is the "from" version of each pool this process rolled, by
// pool name. It lives in memory only, for one leadership term: after a
// restart a rolling pool's "from" is derived again from its machines.
type RolledFrom map[string]string

// Step is the decision for one pool: the report to store before any write,
// and the write to make, if any.
type Step struct {
	Action wire.Action // type "upgrade", target = pool name
	Patch  *Patch      // nil: Action is already the final report
}

// Plan decides one upgrade pass. Pools are sorted by name and at most
// desired.PoolsPerPass are processed. Steps come back in pool order, one per
// pool that has something to report; a pool with nothing to say (always at
// target, or a control-plane or autoscaler pool already at target) has no
// step. At most one step carries a Patch. retry asks for another pass on the
// next poll tick: true while a pool rolls, waits or failed transiently, false
// once everything converged or only final refusals remain.
//
// Plan writes into mem: it remembers the "from" it derives for a pool found
// mid-roll, and forgets the "from" of a pool whose MachineDeployment is off
// target again, since that value belonged to an earlier roll. A nil mem
// remembers nothing. After a Patch succeeds the caller records its From with
// Started; once Outcome halts, it reports every later step with Queued.
//
// Deliberate changes from the original, each because it rolled or reported
// wrongly:
//   - Invalid pool names are reported failed, not skipped silently
//     (docs/contract.md#g-10).
//   - A downgrade is refused, at patch level too, and the target must sit
//     within the kubelet skew policy of the control plane
//     (docs/contract.md#g-8).
//   - Control-plane and autoscaler pools always get their own refusal, and
//     the pre-flight failures go only to pools that would otherwise roll;
//     converged and rolling pools keep their reports (docs/contract.md#g-9).
//   - The target must be a strict vMAJOR.MINOR.PATCH[-pre-release] of at
//     most 64 bytes, and versions are compared as semver orders them: the
//     original compared major.minor.patch loosely, so a pre-release rolled
//     a pool down to it and any spelling of the pool's own version (build
//     metadata, leading zeros, trailing text) rolled it again, written
//     verbatim into every Machine. A version is at target when it names the
//     same version, however the cluster spells it (see version.go).
func Plan(o Observed, p Policy, mem RolledFrom) (steps []Step, retry bool) {
	target := strings.TrimSpace(p.Target)
	if target == "" {
		return nil, false
	}
	entries := selectPools(p.Pools)
	var valid []string
	for _, e := range entries {
		if e.refusal == "" {
			valid = append(valid, e.name)
		}
	}
	decided, retry := decideValid(valid, o, p, target, mem)
	for _, e := range entries {
		if e.refusal != "" {
			steps = append(steps, Step{Action: action(e.name, wire.StatusFailed, e.refusal, p.Revision)})
		} else if s, ok := decided[e.name]; ok {
			steps = append(steps, s)
		}
	}
	return steps, retry
}

// entry is one pool name kept for the pass; a non-empty refusal is its
// final report.
type entry struct{ name, refusal string }

// selectPools sorts the names, keeps at most desired.PoolsPerPass, drops empty
// names (there is no target to report them under) and refuses the invalid
// and the ambiguous ones.
func selectPools(names []string) []entry {
	// Count over the whole list before the cut, so a name whose second copy
	// falls past it is still refused as ambiguous.
	seen := make(map[string]int, len(names))
	for _, n := range names {
		seen[n]++
	}
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, cmp.Compare[string])
	if len(sorted) > desired.PoolsPerPass {
		sorted = sorted[:desired.PoolsPerPass]
	}
	var out []entry
	for i, name := range sorted {
		if name == "" || (i > 0 && sorted[i-1] == name) {
			continue
		}
		e := entry{name: name}
		switch {
		case len(validation.IsDNS1123Subdomain(name)) > 0:
			// The original skipped it silently here, so with scaling off
			// nobody learnt why the pool never rolled (docs/contract.md#g-10).
			e.refusal = invalidName(name)
		case seen[name] > 1:
			// Ambiguous, as scaling treats it: refuse rather than pick one.
			e.refusal = duplicateName(name)
		}
		out = append(out, e)
	}
	return out
}

// decideValid decides the pools that passed selection, by name.
func decideValid(names []string, o Observed, p Policy, target string, mem RolledFrom) (map[string]Step, bool) {
	if len(names) == 0 {
		return nil, false
	}
	if o.MDsErr != nil || o.MDs == nil {
		return allFailed(names, listMDsFailed(p.Namespace, o.MDsErr), p.Revision), true
	}
	if o.MachinesErr != nil {
		return allFailed(names, listMachinesFailed(p.Namespace, o.MachinesErr), p.Revision), true
	}
	want, wantWhy := parseTarget(target)
	states := observe(names, o, want)
	ps := newPass(p, target, want, wantWhy, o.ControlPlane, o.ControlPlaneWhy, mem)
	// Every pool being rolled blocks the others: those the document asks
	// for that are mid-roll to its target, and any roll it no longer asks
	// for (a changed target, a pool dropped from the list) still running.
	for _, s := range states {
		if s.rolling() {
			ps.rolling = append(ps.rolling, s.name)
		}
	}
	ps.rolling = append(ps.rolling, rollingPools(o, mem)...)
	slices.Sort(ps.rolling)
	ps.rolling = slices.Compact(ps.rolling)
	out := make(map[string]Step, len(states))
	for _, s := range states {
		if step, ok := ps.decide(s); ok {
			out[s.name] = step
		}
	}
	return out, ps.retry
}

// allFailed reports every pool failed with the same detail.
func allFailed(names []string, detail string, rev int64) map[string]Step {
	out := make(map[string]Step, len(names))
	for _, n := range names {
		out[n] = Step{Action: action(n, wire.StatusFailed, detail, rev)}
	}
	return out
}

// action is every upgrade report. Its details quote versions from outside
// (the desired state, a MachineDeployment, a Machine, the control plane),
// so they are escaped here, once, for every reader of the report.
func action(pool, status, detail string, rev int64) wire.Action {
	return wire.Action{Type: wire.ActionUpgrade, Target: pool, Status: status, Detail: printable.String(detail), Revision: rev}
}
