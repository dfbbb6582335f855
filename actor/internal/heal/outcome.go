package heal

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// Result is what a sent delete did.
type Result int

const (
	// Deleted: this term deleted the Machine; it is tracked for the unwedge.
	Deleted Result = iota
	// Gone: the Machine was already gone (NotFound). It counts as a heal for
	// the cooldown, but nothing of this term's is left to unwedge.
	Gone
	// Stale: a precondition failed (409) or the node recovered on a fresh
	// read; nothing was deleted and the next pass decides again.
	Stale
	// Failed: any other error; the rest of the pass halts.
	Failed
	// Unsure: the request may have been applied though the answer never
	// came (a timeout, a 5xx, a broken connection). The rest of the pass
	// halts, as for Failed, and the pool's cooldown starts, in case it
	// landed. The machine is not followed for the unwedge: if it shows up
	// deleting, this term cannot tell its own delete from someone else's.
	// A later read settles the report (Settle).
	Unsure
	// Unsent: the write fence refused before the delete was sent (the
	// Lease or the actor's Deployment could not be confirmed), so nothing
	// can have landed. The rest of the pass halts, as for Failed, but
	// nothing is remembered: no cooldown and no hold on the Machine, since a
	// Lease read that timed out once must not keep a dead worker for a
	// whole cooldown. The next pass decides again.
	Unsent
)

// Outcome is the report after step's delete was answered with err, and
// what it did.
func Outcome(step Step, err error, namespace string) (wire.Action, Result) {
	a, d := step.Action, step.Delete
	switch {
	case err == nil:
		a.Status = wire.StatusDone
		a.Detail = fmt.Sprintf("deleted Machine (%s); its MachineSet recreates it", d.Cause)
		return a, Deleted
	case apierrors.IsNotFound(err):
		a.Status = wire.StatusDone
		a.Detail = fmt.Sprintf("Machine already gone (%s); its MachineSet recreates it", d.Cause)
		return a, Gone
	case apierrors.IsConflict(err):
		return NodeChanged(step, "the Machine changed since it was read"), Stale
	}
	a.Status = wire.StatusFailed
	a.Detail = refuse.WriteFailed("delete", err, refuse.MachineDeleteRule(namespace))
	if refuse.Unsure(err) {
		return a, Unsure
	}
	return a, Failed
}

// NodeChanged is the report for a decided delete that was not sent because
// what it was decided on changed: the next pass decides again.
func NodeChanged(step Step, why string) wire.Action {
	a := step.Action
	a.Status = wire.StatusPending
	a.Detail = fmt.Sprintf("stale read: %s; re-evaluating next poll", why)
	return a
}

// Queued is the report for a candidate left untouched because an earlier
// delete in the same pass failed.
func Queued(machine string, rev int64) wire.Action {
	return action(machine, wire.StatusPending, refuse.Queued, rev)
}

// Record notes what the delete d did, answered at returned with the report
// final. One that landed (Deleted or Gone) starts the pool's cooldown, and
// a machine this term deleted is tracked for the unwedge from then; an
// Unsure delete counts for the cooldown too. A Failed one is remembered as
// refused: asking again every pass, while an admission policy or the Role
// refuses it, would only repeat the refusal, the fresh Lists before it
// and an audit entry each minute.
func (m *Memory) Record(d *Delete, final wire.Action, r Result, returned time.Time) {
	delete(m.Refused, d.Machine)
	if r == Failed {
		m.Refused[d.Machine] = Refusal{UID: d.UID, At: returned, Detail: final.Detail}
	}
	if r != Deleted && r != Gone && r != Unsure {
		return
	}
	m.LastHeal[d.Pool] = returned
	t := &Tracked{UID: d.UID, Node: d.Node, Cause: d.Cause, DeletedAt: returned}
	switch r {
	case Deleted:
		m.Tracked[d.Machine] = t
	case Unsure:
		m.Unsure[d.Machine] = t
	}
}

// Settle reads what became of the deletes whose answer was lost, and
// returns the reports that change. A Machine since deleting or gone is
// healed as far as the platform is concerned: its report, "failed" when
// the answer was lost, becomes done, without saying whose delete it was,
// and would otherwise be withdrawn the moment the Machine stopped being a
// candidate. One still there and not deleting was not deleted: the
// decision that follows reports on it as on any other candidate (pending,
// cooldown, while the cooldown its delete started runs).
func (m *Memory) Settle(o Observed, rev int64) []wire.Action {
	var out []wire.Action
	for name, t := range m.Unsure {
		i := slices.IndexFunc(o.Machines, func(x Machine) bool { return x.Name == name && x.UID == t.UID })
		if i >= 0 && !o.Machines[i].Deleting {
			delete(m.Unsure, name)
			continue
		}
		delete(m.Unsure, name)
		out = append(out, action(name, wire.StatusDone, fmt.Sprintf(
			"Machine deleting or gone since a delete whose answer was lost (%s); its MachineSet recreates it", t.Cause), rev))
	}
	slices.SortFunc(out, func(a, b wire.Action) int { return cmp.Compare(a.Target, b.Target) })
	return out
}

// ForgetRefusals drops the refusals of machines o no longer shows live
// under the same UID.
func (m *Memory) ForgetRefusals(o Observed) {
	for name, r := range m.Refused {
		if !slices.ContainsFunc(o.Machines, func(x Machine) bool { return x.Name == name && x.UID == r.UID && !x.Deleting }) {
			delete(m.Refused, name)
		}
	}
}
