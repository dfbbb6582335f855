package scale

import (
	"fmt"
	"strconv"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// Patch is one write: set spec.replicas of the MachineDeployment MD to To.
type Patch struct {
	refuse.MDPatch
	From *int64 // spec.replicas as read; nil when unknown
	To   int64
}

// Removes is how many Machines p takes down once it lands, against live,
// the Machines not yet deleting that count in its pool on the heal's read:
// machine-controller marks them deleting only once the patch reaches it,
// so healing in the same pass counts them as in flight. machine-controller
// scales the Machines to the new count, not by the drop in spec.replicas:
// that is every live Machine past To (more than the drop where Machines
// outnumber spec.replicas, as mid-roll or behind a lagging controller), and
// at least the drop, which the heal's read may not show yet. From a
// replica count that could not be read, only the first is known.
func (p Patch) Removes(live int) int {
	n := max(live-int(p.To), 0)
	if p.From != nil {
		n = max(n, int(*p.From-p.To))
	}
	return n
}

// Body is the JSON merge patch to send with FieldManager: the replica count,
// with the decided resourceVersion as its precondition when one was read.
func (p Patch) Body() []byte {
	type spec struct {
		Replicas int64 `json:"replicas"`
	}
	return p.MergePatch(spec{Replicas: p.To})
}

// Outcome is the report after step's patch was sent and answered with err.
// halt says the rest of the pass must stop: later pools are reported with
// Queued and the pass retried on the next poll.
//
// A Conflict (409: the resourceVersion the decision was made on is stale) or
// a NotFound (the MachineDeployment went away since it was read) is not a
// failure. The decision was made on a stale read, so it is dropped, not
// retried blindly: the pool is reported pending ("stale read;
// re-evaluating") and the next pass decides again from a fresh read. It does
// not halt, because every other patch carries its own precondition and
// cannot be applied on a stale read either. Any other error fails the pool
// and halts. A step without a Patch has nothing to report beyond its Action.
func Outcome(step Step, err error) (wire.Action, bool) {
	a := step.Action
	p := step.Patch
	if p == nil {
		return a, false
	}
	if err != nil {
		return p.Refused(a, err)
	}
	from := "unknown"
	if p.From != nil {
		from = strconv.FormatInt(*p.From, 10)
	}
	a.Status = wire.StatusDone
	a.Detail = fmt.Sprintf("replicas %s to %d; machine-controller reconciles the Machines with the cluster's own credentials", from, p.To)
	return a, false
}

// Queued is the report for a pool left untouched because an earlier pool in
// the same pass failed to write.
func Queued(pool string, rev int64) wire.Action {
	return action(pool, wire.StatusPending, refuse.Queued, rev)
}

// Unconfirmed is the step of a pool whose decision wrote nothing (already
// at the count, or no such MachineDeployment) on the cache's word, and
// whose direct read then failed: the cache may lag a change that would
// alter it, so it is not final and the next poll reads again.
func Unconfirmed(pool string, err error, rev int64) Step {
	return Step{Action: action(pool, wire.StatusPending, "cannot confirm the cached MachineDeployment on a direct read: "+
		refuse.Sanitize(err.Error())+"; retrying next poll", rev), Retry: true}
}

// Retry reports whether the scaling pass wants another try on the next poll
// tick, including a 304 one. steps is the plan; outcomes are the reports
// Outcome (and Queued) gave for the steps that wrote. The List failed, a write
// failed and halted the pass, or a stale read is being re-evaluated: each
// leaves some report short of done. Refusals are final for the revision and
// never retry.
func Retry(steps []Step, outcomes []wire.Action) bool {
	for _, s := range steps {
		if s.Retry {
			return true
		}
	}
	for _, a := range outcomes {
		if a.Status != wire.StatusDone {
			return true
		}
	}
	return false
}
