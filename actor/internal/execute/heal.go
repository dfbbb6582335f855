package execute

import (
	"context"
	"slices"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// heal runs one healing pass: the unwedge first, so it fires even when nothing
// new is unhealthy, then detection and the deletes it allows. removing is
// what this pass's scale-downs and roll take down; with the Machines past
// each pool's count (takedowns.in), it counts as in flight.
func (e *Executor) heal(ctx context.Context, doc desired.Document, removing takedowns) {
	if err := e.ensure(ctx, true); err != nil {
		e.Log.Warn("Healing skipped this pass: cannot read the cluster; retrying next poll", "err", err)
		return
	}
	w := e.cached(true)
	now := e.now()
	o := w.observed(e.Namespace)
	o.Removing = removing.in(w)
	for _, a := range e.HealMemory.Settle(o, doc.Revision) {
		e.Store.Upsert(a)
	}
	e.HealMemory.ForgetRefusals(o)
	e.unwedge(ctx, o, doc.Revision, now)
	policy := heal.PolicyFrom(doc.Healing, doc.Revision, e.HealLimits)
	policy.Named = heal.NamedPools(doc.WorkerPools)
	d := heal.Decide(o, policy, e.HealMemory, now)
	if len(deleted(d)) > 0 {
		// The storm brake and the budget count every Machine and Node: an
		// informer whose watch broke would serve a calm cluster in the
		// middle of an outage. A delete is only ever decided on a direct
		// read.
		e.step()
		fresh, err := e.fresh(ctx, true)
		if err != nil {
			e.Log.Warn("Healing deferred: cannot confirm the decision on a fresh read; retrying next poll", "err", err)
			return
		}
		w = fresh
		o = w.observed(e.Namespace)
		o.Removing = removing.in(w)
		cached := d
		if d = heal.Decide(o, policy, e.HealMemory, now); !slices.Equal(deleted(cached), deleted(d)) {
			// Someone else's delete (machine-controller's join timeout, a
			// scale-down) or a node that came back, seen before acting.
			e.Log.Info("A fresh read changed the heal decision; deleting only what it shows",
				"cached", deleted(cached), "fresh", deleted(d))
		}
	}
	e.Store.Prune(wire.ActionHeal, d.Keep)
	e.limited(d.Limited)
	if d.Storm {
		held := 0 // the storm's refusals, not the Unlinked Machines' reports
		for _, st := range d.Steps {
			if st.Action.Status == wire.StatusFailed {
				held++
			}
		}
		e.Log.Warn("Storm brake: too many unhealthy workers, deleting nothing",
			"candidates", held, "unbackedNodes", d.Unbacked, "maxUnhealthy", policy.MaxUnhealthy)
	}
	e.remediate(ctx, d, o, doc.Revision)
	kept := e.reported(wire.ActionHeal)
	if d.Storm {
		kept[stormTarget] = wire.Action{}
	}
	e.forgetEvents(wire.ActionHeal, kept)
}

// deleted names, in order, the Machines d deletes.
func deleted(d heal.Decision) []string {
	var out []string
	for _, st := range d.Steps {
		if st.Delete != nil {
			out = append(out, st.Delete.Machine)
		}
	}
	return out
}

// remediate walks the decided steps with halt-on-failure: every delete that
// was sent, and every refusal that is news, is also an Event on the Machine;
// a storm is one Event for all its refusals.
//
// A heal is recorded at the time its delete returned, read then: the pass's
// own time was read before the unwedge's pod deletes, the fresh Lists and
// the node re-reads, and a cooldown or eviction timeout counted from it
// would run short by however long those took.
func (e *Executor) remediate(ctx context.Context, d heal.Decision, o heal.Observed, rev int64) {
	if d.Storm {
		e.stormEvent(ctx, d, o)
	}
	halted := false
	for _, st := range d.Steps {
		e.step()
		if halted {
			e.Store.Upsert(heal.Queued(st.Action.Target, rev))
			continue
		}
		e.Store.Upsert(st.Action)
		if st.Delete == nil {
			// A storm's refusals share one Event, stormEvent's.
			if !d.Storm && st.Action.Status == wire.StatusFailed && e.news(st.Action) {
				e.machineEvent(ctx, o, st.Action, true, "KubehzRefused")
			}
			continue
		}
		final, result := e.deleteMachine(ctx, st)
		e.Store.Upsert(final)
		e.HealMemory.Record(st.Delete, final, result, e.now())
		halted = result == heal.Failed || result == heal.Unsure || result == heal.Unsent
		e.Log.Info("Heal", "machine", e.Namespace+"/"+st.Delete.Machine, "pool", st.Delete.Pool,
			"status", final.Status, "detail", final.Detail)
		news := e.news(final)
		switch result {
		case heal.Deleted, heal.Gone:
			e.machineEvent(ctx, o, final, false, "KubehzHealed")
		case heal.Unsure:
			// Each may have landed, whatever the one before it said.
			e.machineEvent(ctx, o, final, true, "KubehzHealFailed")
		case heal.Failed, heal.Unsent:
			if news { // a refusal repeated after a cooldown was recorded the first time
				e.machineEvent(ctx, o, final, true, "KubehzHealFailed")
			}
		}
	}
}

// observed is the world as healing's pure decisions see it; namespace is
// the Machines'.
func (w world) observed(namespace string) heal.Observed {
	o := heal.Observed{
		Namespace: namespace,
		Machines:  make([]heal.Machine, 0, len(w.machines)),
		Nodes:     make(map[string]heal.Node, len(w.nodes)),
		MDs:       make(map[string]heal.MD, len(w.mds)),
	}
	for _, m := range w.machines {
		pool := w.owner(m)
		o.Machines = append(o.Machines, heal.Machine{
			Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, Pool: pool,
			ControlPlane: m.ControlPlane, Created: m.Created, Deleting: m.Deleting, NodeName: m.NodeName,
		})
	}
	for name, n := range w.nodes {
		o.Nodes[name] = heal.Node(*n)
	}
	for name, r := range w.mds {
		o.MDs[name] = heal.MD{ControlPlane: refuse.ControlPlaneReason(poolLabels(r)), Autoscaler: refuse.AutoscalerKey(r.Annotations)}
	}
	return o
}

// machineEvent records a heal report on its Machine, so `kubectl describe
// machine` says what the agent did and why.
func (e *Executor) machineEvent(ctx context.Context, o heal.Observed, a wire.Action, warning bool, reason string) {
	obj := Object{Kind: "Machine", Namespace: e.Namespace, Name: a.Target}
	for _, m := range o.Machines {
		if m.Name == a.Target {
			obj.UID, obj.ResourceVersion = m.UID, m.ResourceVersion
		}
	}
	e.Events.Event(ctx, obj, warning, reason, eventMessage(a))
}

// deleteMachine re-reads a dead node before acting on it, then sends the
// decided delete under the fence.
func (e *Executor) deleteMachine(ctx context.Context, st heal.Step) (wire.Action, heal.Result) {
	d := st.Delete
	if d.Node != "" {
		fresh, err := e.Nodes.Get(ctx, d.Node)
		if err != nil {
			return heal.NodeChanged(st, "cannot re-read node "+d.Node+": "+refuse.Sanitize(err.Error())), heal.Stale
		}
		var n *heal.Node
		if fresh != nil {
			n = (*heal.Node)(fresh)
		}
		if !heal.StillUnhealthy(d, n) {
			return heal.NodeChanged(st, "node "+d.Node+" recovered or changed since it was read"), heal.Stale
		}
	}
	wctx, cancel, err := e.Fence.Write(ctx)
	if err != nil {
		a, _ := heal.Outcome(st, err, e.Namespace)
		return a, heal.Unsent
	}
	defer cancel()
	err = e.Deleter.DeleteMachine(wctx, e.Namespace, d.Machine, d.UID, d.ResourceVersion)
	return heal.Outcome(st, err, e.Namespace)
}
