// Package scale decides worker-pool scaling as a pure
// function: the desired pools and the MachineDeployments read from the
// cluster go in, the reports and the patches to make come out. It makes no
// client calls, reads no clock and logs nothing; the executor around it lists,
// fences and writes.
package scale

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// FieldManager is the field manager every MachineDeployment patch is sent
// with, scaling's and upgrades' alike.
const FieldManager = "kubehz-agent"

// MD is the compact record of one MachineDeployment that scaling reads.
type MD struct {
	Name            string
	ResourceVersion string
	Replicas        *int64            // spec.replicas; nil when missing or unreadable
	Labels          map[string]string // metadata.labels
	Annotations     map[string]string // metadata.annotations
	// The three label maps of the template, from outer to inner:
	// spec.template.metadata.labels, spec.template.spec.metadata.labels and
	// spec.template.spec.labels.
	TemplateLabels         map[string]string
	TemplateSpecMetaLabels map[string]string
	TemplateSpecLabels     map[string]string
}

// Target is one entry of the desired state's workerPools as scaling reads
// it: a pool and the replica count it should reach.
type Target struct {
	Name            string
	DesiredReplicas int64
	// Unknown marks a desiredReplicas that was missing, null or not an
	// integer: the pool is refused, never scaled to a guessed count.
	Unknown bool
}

// Policy is what the pass acts under.
type Policy struct {
	MaxReplicas int64  // KUBEHZ_MAX_REPLICAS
	Namespace   string // KUBEHZ_MD_NAMESPACE, named in details
	Revision    int64  // the desired revision every report carries
}

// Step is the decision for one pool: the report to store before any write,
// and the write to make, if any.
type Step struct {
	Action wire.Action
	Patch  *Patch // nil: nothing to write; Action is already the final report
	// Retry asks for another pass on the next poll tick even though nothing
	// is written (the List failed).
	Retry bool
}

// Plan decides one scaling pass. Pools are sorted by name and at most
// desired.PoolsPerPass are processed. mds holds the MachineDeployments of the
// namespace by name; a nil map, or a non-nil listErr, means the List failed,
// and then every pool is reported failed and retried. With no pools the
// caller need not List at all: Plan returns nil whatever mds holds.
//
// Steps come back in pool order. Only the steps with a Patch write, and only
// to the MachineDeployment named exactly like the pool: an MD the document
// does not name never appears in a plan.
//
// The original reported a bare pending before looking a pool up. Here the
// lookup is part of the same pure decision, so that mark would only flap a
// converged report (done → pending → done) on every retry pass and wake the
// beat; it is left out. The halt rule (docs/contract.md#refusals) is applied
// by the caller as it writes: once Outcome says halt, every later step is
// reported with Queued instead.
func Plan(pools []Target, mds map[string]MD, listErr error, p Policy) []Step {
	// Count names over the whole list before the cut, so a name whose
	// second copy falls past it is still refused as ambiguous.
	seen := make(map[string]int, len(pools))
	for _, pool := range pools {
		seen[pool.Name]++
	}
	pools = firstPools(pools)
	if len(pools) == 0 {
		return nil
	}
	if listErr != nil || mds == nil {
		return listFailed(pools, listErr, p)
	}
	steps := make([]Step, 0, len(pools))
	for i, pool := range pools {
		if pool.Name == "" || (i > 0 && pools[i-1].Name == pool.Name) {
			continue // no target to report under, or already decided
		}
		steps = append(steps, decide(pool, seen[pool.Name] > 1, mds, p))
	}
	return steps
}

// decide walks the docs/contract.md#scaling table for one pool; the first step
// that applies wins.
func decide(pool Target, duplicate bool, mds map[string]MD, p Policy) Step {
	report := func(status, detail string) Step {
		return Step{Action: action(pool.Name, status, detail, p.Revision)}
	}
	if len(validation.IsDNS1123Subdomain(pool.Name)) > 0 {
		return report(wire.StatusFailed, fmt.Sprintf(
			"invalid pool name %q: not a DNS-1123 subdomain", refuse.Sanitize(pool.Name)))
	}
	if duplicate {
		// Ambiguous: refuse rather than pick one of the desired counts.
		return report(wire.StatusFailed, fmt.Sprintf(
			"pool %q is named more than once in the desired state; refusing to pick one", pool.Name))
	}
	md, ok := mds[pool.Name]
	if !ok {
		return report(wire.StatusFailed, fmt.Sprintf(
			"no MachineDeployment named %q in namespace %q (pools are matched to MachineDeployments by name)",
			pool.Name, p.Namespace))
	}
	md.Name = pool.Name // the map key is the name that matched
	if why := refuse.ControlPlaneReason(md.poolLabels()); why != "" {
		return report(wire.StatusFailed, fmt.Sprintf(
			"refusing: MachineDeployment %q looks like a control-plane pool (%s)", md.Name, why))
	}
	if key := refuse.AutoscalerKey(md.Annotations); key != "" {
		return report(wire.StatusFailed, fmt.Sprintf(
			"refusing: MachineDeployment %q is managed by cluster-autoscaler (annotation %s)", md.Name, key))
	}
	if pool.Unknown {
		return report(wire.StatusFailed, "desiredReplicas is missing or not an integer; refusing to guess a count")
	}
	want := pool.DesiredReplicas
	if want < 0 || want > p.MaxReplicas {
		return report(wire.StatusFailed, fmt.Sprintf(
			"desired replicas %d is outside 0..%d (KUBEHZ_MAX_REPLICAS); refusing, not clamping", want, p.MaxReplicas))
	}
	if md.Replicas != nil && *md.Replicas == want {
		return report(wire.StatusDone, fmt.Sprintf("already at %d replicas", want))
	}
	step := report(wire.StatusInProgress, fmt.Sprintf("patching spec.replicas to %d", want))
	step.Patch = &Patch{
		MDPatch: refuse.MDPatch{MD: md.Name, Namespace: p.Namespace, ResourceVersion: md.ResourceVersion},
		From:    md.Replicas,
		To:      want,
	}
	return step
}

// listFailed reports every pool with a name as failed, to be retried.
func listFailed(pools []Target, listErr error, p Policy) []Step {
	why := "no result"
	if listErr != nil {
		why = refuse.Sanitize(listErr.Error())
	}
	detail := fmt.Sprintf("cannot list MachineDeployments in namespace %q: %s", p.Namespace, why)
	var steps []Step
	for i, pool := range pools {
		if pool.Name == "" || (i > 0 && pools[i-1].Name == pool.Name) {
			continue
		}
		steps = append(steps, Step{Action: action(pool.Name, wire.StatusFailed, detail, p.Revision), Retry: true})
	}
	return steps
}

// firstPools returns a sorted copy of at most desired.PoolsPerPass pools. The
// sort is stable so equal names keep the document's order.
func firstPools(pools []Target) []Target {
	sorted := slices.Clone(pools)
	slices.SortStableFunc(sorted, func(a, b Target) int { return cmp.Compare(a.Name, b.Name) })
	if len(sorted) > desired.PoolsPerPass {
		sorted = sorted[:desired.PoolsPerPass]
	}
	return sorted
}

// poolLabels is what the shared control-plane test reads.
func (md MD) poolLabels() refuse.PoolLabels {
	return refuse.PoolLabels{Name: md.Name, Labels: md.Labels, TemplateLabels: md.TemplateLabels,
		TemplateSpecMetaLabels: md.TemplateSpecMetaLabels, TemplateSpecLabels: md.TemplateSpecLabels}
}

func action(pool, status, detail string, rev int64) wire.Action {
	return wire.Action{Type: wire.ActionScale, Target: pool, Status: status, Detail: detail, Revision: rev}
}
