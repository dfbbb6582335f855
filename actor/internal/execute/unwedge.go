package execute

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/heal"
)

// unwedgeRBAC is what an operator checks when the unwedge is forbidden.
const unwedgeRBAC = "the actor's RBAC from deploy/actor: kubectl auth can-i list pods --as=system:serviceaccount:kubehz-system:kubehz-actor (and delete pods)"

// unwedge force-deletes the pods stuck Terminating on the dead node of a
// machine this term deleted, once per machine (docs/contract.md#heal-unwedge).
func (e *Executor) unwedge(ctx context.Context, o heal.Observed, rev int64, now time.Time) {
	drop, due := heal.Due(e.HealMemory, o, e.EvictionTimeout, now)
	e.forget(ctx, drop)
	if e.Pods == nil {
		return // no pod source: nothing to unwedge with
	}
	for _, name := range due {
		t := e.HealMemory.Tracked[name]
		e.step()
		if !e.stillUnreachable(ctx, t.Node, now) {
			continue // the attempt is kept for a later outage
		}
		pods, err := e.Pods.PodsOn(ctx, t.Node)
		if apierrors.IsForbidden(err) {
			t.Attempted = true
			a := heal.UnwedgeForbidden(name, t, "list", 0, now, rev)
			e.Store.Upsert(a)
			e.machineEvent(ctx, o, a, true, "KubehzUnwedgeForbidden")
			e.Log.Error("Eviction unwedge forbidden: cannot list pods; never retried for this machine", "machine", name, "node", t.Node, "err", err,
				"check", unwedgeRBAC)
			continue
		}
		if err != nil {
			e.Log.Warn("Eviction unwedge: cannot list pods; trying again next poll", "machine", name, "node", t.Node, "err", err)
			continue
		}
		stuck := heal.Stuck(pods, t.Node)
		if len(stuck) == 0 {
			continue
		}
		t.Attempted = true
		deleted, failed, left, forbidden, untouched := e.forceDelete(ctx, t.Node, stuck)
		if untouched {
			// The lease check failed before any delete was sent, which is not
			// the unwedge failing: keep the one attempt for the next pass.
			t.Attempted = false
			e.Log.Warn("Eviction unwedge deferred: the write fence refused; trying again next poll", "machine", name, "node", t.Node)
			continue
		}
		a, reason := heal.Unwedged(name, t, deleted, failed, left, now, rev), "KubehzUnwedged"
		if forbidden {
			a, reason = heal.UnwedgeForbidden(name, t, "delete", deleted, now, rev), "KubehzUnwedgeForbidden"
			e.Log.Error("Eviction unwedge forbidden: cannot delete pods; never retried for this machine", "machine", name, "node", t.Node,
				"check", unwedgeRBAC)
		}
		e.Store.Upsert(a)
		e.machineEvent(ctx, o, a, forbidden, reason)
		e.Log.Info("Eviction unwedge", "machine", name, "node", t.Node, "forceDeleted", deleted, "failed", failed, "left", left)
	}
}

// forget stops following the machines the cache shows gone or replaced,
// once a direct List agrees: a cache that has not caught up with a
// machine's creation would otherwise cost it its unwedge for good.
func (e *Executor) forget(ctx context.Context, drop []string) {
	if len(drop) == 0 {
		return
	}
	e.step()
	live, err := e.Machines.Fresh(ctx)
	if err != nil {
		e.Log.Warn("Cannot confirm which healed machines are gone; keeping them until the next poll", "err", err)
		return
	}
	present := make(map[string]types.UID, len(live))
	for _, m := range live {
		present[m.Name] = m.UID
	}
	for _, name := range drop {
		if uid, ok := present[name]; !ok || uid != e.HealMemory.Tracked[name].UID {
			delete(e.HealMemory.Tracked, name)
		}
	}
}

// stillUnreachable re-reads the node from the apiserver before anything is
// force-deleted on it, since the cache may lag a recovery: only a node that
// still exists and has not been Ready for at least heal.MinWindow qualifies;
// a condition without a transition time has been down for an unknown time,
// which is not long enough.
// A node that recovered and blipped NotReady a moment ago may still run its
// pods; force-deleting them could run a StatefulSet's pod twice.
func (e *Executor) stillUnreachable(ctx context.Context, node string, now time.Time) bool {
	n, err := e.Nodes.Get(ctx, node)
	if err != nil {
		e.Log.Warn("Eviction unwedge: cannot re-read the node; trying again next poll", "node", node, "err", err)
		return false
	}
	return n != nil && n.Ready != heal.ReadyTrue && n.Ready != "" && !n.Since.IsZero() && now.Sub(n.Since) >= heal.MinWindow
}

// forceDelete deletes each stuck pod with grace 0 and its UID as a
// precondition. A pod already gone or replaced (404, 409) is fine; a
// Forbidden stops at once, and so does a fence that refuses: the pods left
// are counted failed. untouched says the fence refused before any delete was
// sent; a delete the apiserver answered, even with 404, was an attempt.
//
// A hundred deletes, each behind the fence's two reads, take a while on a
// slow apiserver, and a node that comes back meanwhile may run the pods
// still to go: the node is read again before every unwedgeRecheck-th
// delete, and once it no longer reads unreachable the rest are left.
func (e *Executor) forceDelete(ctx context.Context, node string, pods []heal.Pod) (deleted, failed, left int, forbidden, untouched bool) {
	for i, p := range pods {
		e.step()
		if i > 0 && i%unwedgeRecheck == 0 && !e.stillUnreachable(ctx, node, e.now()) {
			return deleted, failed, len(pods) - i, false, false
		}
		wctx, cancel, err := e.Fence.Write(ctx)
		if err != nil {
			return deleted, failed + len(pods) - i, 0, false, i == 0
		}
		err = e.Deleter.DeletePod(wctx, p.Namespace, p.Name, p.UID)
		cancel()
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			return deleted, failed, 0, true, false
		case errors.Is(err, context.Canceled):
			return deleted, failed + len(pods) - i, 0, false, false // the term is ending
		default:
			failed++
		}
	}
	return deleted, failed, 0, false, false
}

// unwedgeRecheck is how many pods the unwedge force-deletes between two
// reads of their node.
const unwedgeRecheck = 10
