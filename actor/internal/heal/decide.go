package heal

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/wire"
)

// Candidate is a machine detection found unhealthy.
type Candidate struct {
	Machine Machine
	Node    string    // "" for a machine whose node never joined
	Since   time.Time // the node's Ready lastTransitionTime; zero when joinless
	Cause   string
}

// Delete is one decided Machine deletion. UID and ResourceVersion are the
// preconditions it is sent with, so a Machine replaced or changed since the
// decision is never deleted (closing docs/contract.md#g-11).
type Delete struct {
	Machine         string
	UID             types.UID
	ResourceVersion string
	Pool            string
	Node            string
	NodeSince       time.Time // re-checked against a fresh read of the node
	Cause           string
}

// Step is the decision for one candidate: the report to store before any
// write, and the delete to make, if any.
type Step struct {
	Action wire.Action
	Delete *Delete // nil: Action is already final for this pass
}

// Decision is one healing pass.
type Decision struct {
	Steps []Step // one per candidate and Unlinked Machine, by machine name
	// Keep names every candidate and Unlinked Machine: heal reports of
	// other targets are pruned unless done (a node that recovered by
	// itself).
	Keep map[string]bool
	// Unbacked names the unhealthy worker nodes no Machine stands behind. They
	// cannot be healed, but they count toward the storm brake
	// (docs/contract.md#g-12): an outage that is not machine-backed is still an
	// outage.
	Unbacked []string
	// InFlight counts the Machines already being deleted, by anyone, and
	// those machine-controller has yet to take down (Observed.Removing).
	InFlight int
	Storm    bool
	// Limited is the report that the local limits replaced part of the
	// document's policy (target LimitsTarget); nil when they did not.
	Limited *wire.Action
}

// Decide runs detection, the storm brake, the in-flight budget and the cooldown
// (docs/contract.md#heal-decisions) for one pass. mem is read, not changed: the
// caller records a heal only once its delete succeeded.
//
// A delete decided here uses up budget and cooldown for the candidates after
// it even if it is then not sent (its node recovered on a fresh read, or a
// precondition failed): the next pass decides again, so the error is only
// ever toward waiting.
func Decide(o Observed, p Policy, mem *Memory, now time.Time) Decision {
	o = withTracked(o, mem)
	cands, unbacked, unlinked := Detect(o, p, now)
	d := Decision{Keep: make(map[string]bool, len(cands)+len(unlinked)), Unbacked: unbacked}
	for _, c := range cands {
		d.Keep[c.Machine.Name] = true
	}
	for _, u := range unlinked {
		d.Keep[u.Machine] = true
	}
	if d.Limited = limitsReport(p); d.Limited != nil {
		d.Keep[LimitsTarget] = true
	}
	d.InFlight = o.Removing
	for _, m := range o.Machines {
		if m.Deleting {
			d.InFlight++
		}
	}
	if n := unhealthy(o, cands); n > p.MaxUnhealthy && len(cands)+len(unbacked) > 0 {
		d.Storm = true
		detail := fmt.Sprintf("unhealthy count %d exceeds maxUnhealthy %d — refusing (possible outage)", n, p.MaxUnhealthy)
		for _, c := range cands {
			d.Steps = append(d.Steps, Step{Action: action(c.Machine.Name, wire.StatusFailed, detail, p.Revision)})
		}
		d.Steps = withUnlinked(d.Steps, unlinked, p.Revision)
		return d
	}
	budget := p.MaxUnhealthy - d.InFlight
	healed := map[string]time.Time{} // heals this pass plans, for the cooldown of the next candidate
	for _, c := range cands {
		st := decideOne(c, o, p, mem, now, budget, d.InFlight, healed)
		if st.Delete != nil {
			budget--
			d.InFlight++
			healed[st.Delete.Pool] = now
		}
		d.Steps = append(d.Steps, st)
	}
	d.Steps = withUnlinked(d.Steps, unlinked, p.Revision)
	return d
}

// unhealthy is the storm brake's count: every worker Node that is not
// Ready (the unbacked ones among them), and every candidate whose Machine no
// such Node stands behind (one that never joined). A Node in its window or
// behind a deleting Machine only adds to a storm: it cannot make one alone,
// as there is nothing yet to hold back.
func unhealthy(o Observed, cands []Candidate) int {
	down := notReadyWorkers(o)
	n := len(down)
	for _, c := range cands {
		if !down[c.Node] {
			n++
		}
	}
	return n
}

// withUnlinked adds the Unlinked Machines' reports to steps, keeping them by
// machine name. They are not candidates: they count toward neither the
// storm brake nor the budget.
func withUnlinked(steps []Step, unlinked []Unlinked, rev int64) []Step {
	if len(unlinked) == 0 {
		return steps
	}
	for _, u := range unlinked {
		steps = append(steps, Step{Action: action(u.Machine, wire.StatusPending, u.Detail, rev)})
	}
	slices.SortStableFunc(steps, func(a, b Step) int { return cmp.Compare(a.Action.Target, b.Action.Target) })
	return steps
}

// withTracked marks the machines this term deleted as deleting even where the
// read does not show it yet (an informer a moment behind the delete): they
// are in flight, and must never be decided on, or reported, again.
func withTracked(o Observed, mem *Memory) Observed {
	if len(mem.Tracked) == 0 {
		return o
	}
	machines := slices.Clone(o.Machines)
	for i, m := range machines {
		if t, ok := mem.Tracked[m.Name]; ok && t.UID == m.UID {
			machines[i].Deleting = true
		}
	}
	o.Machines = machines
	return o
}

// decideOne walks the docs/contract.md#heal-decisions table for one candidate;
// the first row that applies wins.
func decideOne(c Candidate, o Observed, p Policy, mem *Memory, now time.Time, budget, inFlight int, healed map[string]time.Time) Step {
	m := c.Machine
	report := func(status, detail string) Step {
		return Step{Action: action(m.Name, status, detail, p.Revision)}
	}
	md, owned := o.MDs[m.Pool]
	switch {
	case m.Pool == "" || !owned:
		return report(wire.StatusFailed, fmt.Sprintf(
			"refusing: no owning MachineDeployment for Machine %s (%s); deleting an unowned machine would lose its capacity for good", m.Name, steady(c)))
	case md.ControlPlane != "":
		return report(wire.StatusFailed, fmt.Sprintf(
			"refusing: MachineDeployment %q looks like a control-plane pool (%s)", m.Pool, md.ControlPlane))
	case md.Autoscaler != "":
		return report(wire.StatusFailed, fmt.Sprintf(
			"refusing: pool %q is managed by cluster-autoscaler (annotation %s)", m.Pool, md.Autoscaler))
	case !p.Named[m.Pool]:
		return report(wire.StatusFailed, fmt.Sprintf("refusing: %s; %s", unnamed(p, m.Pool), steady(c)))
	case budget <= 0:
		return report(wire.StatusPending, fmt.Sprintf(
			"waiting: %d disruption(s) already in flight (maxUnhealthy %d); %s", inFlight, p.MaxUnhealthy, steady(c)))
	}
	last := mem.lastHeal(m.Pool)
	if t, ok := healed[m.Pool]; ok && t.After(last) {
		last = t
	}
	if until := last.Add(p.Cooldown); until.After(now) {
		return report(wire.StatusPending, fmt.Sprintf(
			"waiting: cooldown of pool %q until %s; %s", m.Pool, until.UTC().Format(time.RFC3339), steady(c)))
	}
	if r, ok := mem.Refused[m.Name]; ok && r.UID == m.UID && now.Before(r.At.Add(p.Cooldown)) {
		// Asked again once the pool's cooldown has passed since: the
		// refusal may have been lifted by then.
		return report(wire.StatusFailed, r.Detail)
	}
	st := report(wire.StatusInProgress, fmt.Sprintf("deleting Machine (%s)", c.Cause))
	st.Delete = &Delete{Machine: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Pool: m.Pool, Node: c.Node, NodeSince: c.Since, Cause: c.Cause}
	return st
}

// steady is the candidate's cause without the time that grows on every
// pass, for a refusal or a wait: its report stays the same pass after pass,
// so it is no news to the Events, costs no ConfigMap write and wakes no
// beat.
func steady(c Candidate) string {
	if c.Node == "" {
		return fmt.Sprintf("no node joined in time, created %s", c.Machine.Created.UTC().Format(time.RFC3339))
	}
	state, _, _ := strings.Cut(c.Cause, " for ") // "node n1 NotReady"
	return fmt.Sprintf("%s since %s", state, c.Since.UTC().Format(time.RFC3339))
}

// StillUnhealthy re-checks a decided node delete against a fresh read of the
// node, since the cache may lag a recovery: the node must still exist, still
// not be Ready, and have been so since the same transition.
func StillUnhealthy(d *Delete, fresh *Node) bool {
	if d.Node == "" {
		return true // joinless: the Machine's resourceVersion precondition covers a late join
	}
	return fresh != nil && fresh.Ready != ReadyTrue && fresh.Ready != "" && fresh.Since.Equal(d.NodeSince)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

func action(machine, status, detail string, rev int64) wire.Action {
	return wire.Action{Type: wire.ActionHeal, Target: machine, Status: status, Detail: detail, Revision: rev}
}

// unnamed says why the document does not let a pool be healed: it does not
// name it, or names it past the pools the actor takes.
func unnamed(p Policy, pool string) string {
	if _, past := p.Named[pool]; past {
		return fmt.Sprintf("pool %q is named past the first %d of the desired state's workerPools by name, the most the actor takes",
			pool, desired.PoolsPerPass)
	}
	return fmt.Sprintf("pool %q is not among the desired state's workerPools", pool)
}
