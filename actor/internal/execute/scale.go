package execute

import (
	"context"
	"strings"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/scale"
	"kubehz.dev/agent/shared/wire"
)

// scale runs the scaling pass. It reports whether it wants a retry, and
// what its scale-downs remove (scale.Patch.Removes).
func (e *Executor) scale(ctx context.Context, doc desired.Document) (retry bool, removing takedowns) {
	pools := make([]scale.Target, 0, len(doc.WorkerPools))
	for _, p := range doc.WorkerPools {
		sp := scale.Target{Name: p.Name, Unknown: p.DesiredReplicas == nil}
		if p.DesiredReplicas != nil {
			sp.DesiredReplicas = *p.DesiredReplicas
		}
		pools = append(pools, sp)
	}
	if len(pools) == 0 {
		e.Store.Prune(wire.ActionScale, nil)
		return false, takedowns{}
	}
	var records map[string]*cluster.MachineDeployment
	var listErr error
	if err := e.MDs.Ensure(e.Base, ctx); err != nil {
		listErr = err
	} else {
		records = e.MDs.List()
	}
	policy := scale.Policy{MaxReplicas: e.MaxReplicas, Namespace: e.Namespace, Revision: doc.Revision}
	steps := scale.Plan(pools, toMDs(records), listErr, policy)
	if records != nil {
		changed, unconfirmed := e.confirm(ctx, steps, records)
		if changed {
			steps = scale.Plan(pools, toMDs(records), nil, policy)
		}
		for i, st := range steps {
			if err, ok := unconfirmed[st.Action.Target]; ok && st.Patch == nil {
				steps[i] = scale.Unconfirmed(st.Action.Target, err, doc.Revision)
			}
		}
	}
	// What this revision reported before the pass, to tell news from a
	// repeat once the in-progress mark has passed through the store.
	before := e.reported(wire.ActionScale)
	// outcomes holds only the reports of steps that wrote or were queued:
	// scale.Retry reads refusals from the plan, and they never retry.
	outcomes := make([]wire.Action, 0, len(steps))
	halted := false
	for _, st := range steps {
		e.step()
		if halted {
			// The halt rule (docs/contract.md#refusals): every later pool
			// waits for the next poll.
			a := scale.Queued(st.Action.Target, doc.Revision)
			e.Store.Upsert(a)
			outcomes = append(outcomes, a)
			continue
		}
		e.Store.Upsert(st.Action)
		final, halt := st.Action, false
		if st.Patch != nil {
			sent, err := e.sendPatch(ctx, st.Patch.Namespace, st.Patch.MD, st.Patch.Body())
			removing.add(*st.Patch, sent, err)
			final, halt = scale.Outcome(st, err)
			e.Store.Upsert(final)
			outcomes = append(outcomes, final)
		}
		halted = halted || halt
		if prev, ok := before[final.Target]; !ok || prev != final {
			// Only a new outcome is news; a retry pass that repeats one
			// would only flood the object's events.
			e.event(ctx, records, final)
		}
	}
	e.Store.Prune(wire.ActionScale, targets(steps, func(st scale.Step) string { return st.Action.Target }))
	return scale.Retry(steps, outcomes), removing
}

// confirm re-reads, straight from the apiserver, every MachineDeployment
// behind a final decision that writes nothing, since the cache may lag a
// change that would alter it. It refreshes records in place and reports
// whether anything differed, so the caller can plan again on fresh data,
// and the pools whose read failed, whose decision the cache alone cannot
// make final.
func (e *Executor) confirm(ctx context.Context, steps []scale.Step, records map[string]*cluster.MachineDeployment) (changed bool, unconfirmed map[string]error) {
	for _, st := range steps {
		a := st.Action
		final := st.Patch == nil && (a.Status == wire.StatusDone || strings.Contains(a.Detail, "no MachineDeployment"))
		if !final {
			continue
		}
		e.step()
		fresh, err := e.MDs.Get(ctx, a.Target)
		if err != nil {
			if unconfirmed == nil {
				unconfirmed = map[string]error{}
			}
			unconfirmed[a.Target] = err
			continue
		}
		cached, had := records[a.Target]
		switch {
		case fresh == nil && had:
			delete(records, a.Target)
			changed = true
		case fresh != nil && (!had || cached.ResourceVersion != fresh.ResourceVersion):
			records[a.Target] = fresh
			changed = true
		}
	}
	return changed, unconfirmed
}

func toMDs(records map[string]*cluster.MachineDeployment) map[string]scale.MD {
	if records == nil {
		return nil
	}
	out := make(map[string]scale.MD, len(records))
	for name, r := range records {
		out[name] = scale.MD{
			Name: r.Name, ResourceVersion: r.ResourceVersion, Replicas: r.Replicas,
			Labels: r.Labels, Annotations: r.Annotations, TemplateLabels: r.TemplateLabels,
			TemplateSpecMetaLabels: r.TemplateSpecMetaLabels, TemplateSpecLabels: r.TemplateSpecLabels,
		}
	}
	return out
}

// sendPatch sends one merge patch to a MachineDeployment under the fence,
// saying whether the fence let it go.
func (e *Executor) sendPatch(ctx context.Context, namespace, md string, body []byte) (sent bool, err error) {
	wctx, cancel, err := e.Fence.Write(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	return true, e.Patcher.PatchMD(wctx, namespace, md, body)
}

// event records every act and refusal on the MachineDeployment it concerns,
// so `kubectl describe machinedeployment` says what the agent did and why.
func (e *Executor) event(ctx context.Context, records map[string]*cluster.MachineDeployment, a wire.Action) {
	// A scale is in progress only until its patch is answered, and only
	// the answer is recorded.
	reason := map[string]string{
		wire.StatusDone: "KubehzScaled", wire.StatusFailed: "KubehzRefused", wire.StatusPending: "KubehzPending",
	}[a.Status]
	if a.Status == wire.StatusDone && strings.HasPrefix(a.Detail, "already at") {
		reason = "KubehzInSync"
	}
	md, ok := records[a.Target]
	if !ok || reason == "" || a.Status == wire.StatusPending && a.Detail == "" || !e.news(a) {
		return
	}
	e.Events.Event(ctx, mdObject(md), a.Status == wire.StatusFailed, reason, eventMessage(a))
}

func mdObject(md *cluster.MachineDeployment) Object {
	return Object{Kind: "MachineDeployment", Namespace: md.Namespace, Name: md.Name, UID: md.UID, ResourceVersion: md.ResourceVersion}
}
