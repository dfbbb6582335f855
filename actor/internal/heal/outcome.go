package heal

import (
	"fmt"
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
	Unsure
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

// Record notes a delete that landed (Deleted or Gone): the pool's cooldown
// starts at returned, when the delete's answer came, and a machine this
// term deleted is tracked for the unwedge from then.
//
// An Unsure delete counts for the cooldown too.
func (m *Memory) Record(d *Delete, r Result, returned time.Time) {
	if r != Deleted && r != Gone && r != Unsure {
		return
	}
	m.LastHeal[d.Pool] = returned
	if r == Deleted {
		m.Tracked[d.Machine] = &Tracked{UID: d.UID, Node: d.Node, Cause: d.Cause, DeletedAt: returned}
	}
}
