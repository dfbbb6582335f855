// Package execute is the actor's executor: the execution gate of the
// desired-state document, then each authorized capability, every write
// fenced by the lease, every act and refusal reported and recorded as an
// Event on the object it concerns.
package execute

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/scale"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/desired"
	"kubehz.dev/agent/shared/wire"
)

// Fence hands out a context for one write while this process leads.
type Fence interface {
	Write(ctx context.Context) (context.Context, context.CancelFunc, error)
}

// Patcher sends one merge patch to a MachineDeployment.
type Patcher interface {
	PatchMD(ctx context.Context, namespace, name string, body []byte) error
}

// Recorder writes a Kubernetes Event on a MachineDeployment.
type Recorder interface {
	MDEvent(ctx context.Context, md *cluster.Record, warning bool, reason, message string)
}

// Publisher hands the reports to the observer.
type Publisher interface {
	Publish(ctx context.Context, rev int64, actions []wire.Action) error
}

// Progress hears, before each pool's step and each publish, that the pass
// is still moving; nil means nobody listens.
type Progress interface {
	Step()
}

// MDs is the on-demand MachineDeployment cache.
type MDs interface {
	Ensure(base, ctx context.Context) error
	Stop()
	List() map[string]*cluster.Record
	Get(ctx context.Context, name string) (*cluster.Record, error)
}

// Executor runs one pass per desired-state document.
type Executor struct {
	Base        context.Context // bounds the MD informer's life
	Fence       Fence
	Store       *store.Store
	MDs         MDs
	Patcher     Patcher
	Events      Recorder
	Publisher   Publisher
	Namespace   string // of the MachineDeployments
	MaxReplicas int64
	Log         *slog.Logger
	Progress    Progress

	// Healing and upgrades read these; nil only where a test authorizes
	// neither.
	Machines Machines
	Nodes    Nodes
	Deleter  Deleter
	Pods     Pods
	Version  Version
	// Memory is this term's healing memory. The executor is built when a
	// replica becomes leader, so its cooldown baseline is the term's start.
	Memory *heal.Memory
	// EvictionTimeout is KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS.
	EvictionTimeout time.Duration
	Now             func() time.Time

	// rolls remembers, per pool, the kubelet version this term rolled from.
	rolls upgrade.Memory

	// landed is true once the store's current reports are in the ConfigMap.
	// It starts false, so a new leader's first Flush publishes its own empty
	// document before anything else, and a publish that fails leaves it
	// false until a later Flush lands it.
	landed bool
}

// Execute applies the gate and the authorized capabilities; it reports
// whether the next poll tick should run another pass even without a change.
func (e *Executor) Execute(ctx context.Context, doc desired.Document) bool {
	x := doc.Execution
	if !x.Scaling && !x.Upgrades && !doc.HealingArmed() {
		// Nothing is authorized: no API call, not even a List.
		e.stopCaches(false, false, false)
		e.Store.Clear()
		e.publish(ctx, 0)
		return false
	}
	e.Store.Begin(doc.Revision)
	// A capability switched off loses its reports at once, even when the
	// revision did not change (closing G-2).
	if !x.Scaling {
		e.Store.ClearType(wire.ActionScale)
	}
	if !x.Upgrades {
		e.Store.ClearType(wire.ActionUpgrade)
	}
	if !doc.HealingArmed() {
		e.Store.ClearType(wire.ActionHeal)
	}
	// Only what an authorized capability reads keeps watching; upgrades
	// read nothing until the document names a version.
	e.stopCaches(x.Scaling, x.Upgrades && hasTarget(doc), doc.HealingArmed())
	// Capacity first, then version rolls, then disruption: the healer
	// counts the machines the earlier steps already set deleting.
	retry := false
	if x.Scaling {
		retry = e.scale(ctx, doc)
	}
	if x.Upgrades {
		retry = e.upgrade(ctx, doc) || retry
	}
	if doc.HealingArmed() {
		e.heal(ctx, doc)
		retry = true // healing re-evaluates on every tick, 304s included
	}
	e.publish(ctx, doc.Revision)
	return retry
}

// stopCaches stops every cache no authorized capability reads: all three
// read MachineDeployments, upgrades and healing read Machines, and only
// healing reads Nodes.
func (e *Executor) stopCaches(scaling, upgrades, healing bool) {
	if !scaling && !upgrades && !healing {
		e.MDs.Stop()
	}
	if !upgrades && !healing && e.Machines != nil {
		e.Machines.Stop()
	}
	if !healing && e.Nodes != nil {
		e.Nodes.Stop()
	}
}

func (e *Executor) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Clear drops every report: the platform no longer authorizes anything
// (a 4xx from /desired, or a document that failed validation; closing G-1).
func (e *Executor) Clear(reason string) {
	e.stopCaches(false, false, false)
	if e.Store.Clear() {
		e.Log.Warn("Reports cleared: nothing is authorized", "reason", reason)
	}
	e.publish(e.Base, 0)
}

// Flush publishes the reports if the last attempt did not land: the poller
// calls it on every tick that runs no pass, 304s and failed fetches
// included, so a report write lost to an apiserver blip is written again
// within one poll interval rather than when the document next changes.
func (e *Executor) Flush(ctx context.Context) {
	if !e.landed {
		e.publish(ctx, e.Store.Revision())
	}
}

func (e *Executor) publish(ctx context.Context, rev int64) {
	e.step()
	// The wire carries 20 reports; the newest outcomes win (G-3).
	err := e.Publisher.Publish(ctx, e.Store.Revision(), e.Store.Newest(wire.MaxActions))
	e.landed = err == nil
	if err != nil && !errors.Is(err, context.Canceled) {
		e.Log.Error("Cannot publish action reports; writing them again on the next poll tick", "err", err, "revision", rev)
	}
}

// scale runs the P3 pass and reports whether it wants a retry.
func (e *Executor) scale(ctx context.Context, doc desired.Document) bool {
	pools := make([]scale.Pool, 0, len(doc.WorkerPools))
	for _, p := range doc.WorkerPools {
		sp := scale.Pool{Name: p.Name, Unknown: p.DesiredReplicas == nil}
		if p.DesiredReplicas != nil {
			sp.DesiredReplicas = *p.DesiredReplicas
		}
		pools = append(pools, sp)
	}
	if len(pools) == 0 {
		return false
	}
	var records map[string]*cluster.Record
	var listErr error
	if err := e.MDs.Ensure(e.Base, ctx); err != nil {
		listErr = err
	} else {
		records = e.MDs.List()
	}
	policy := scale.Policy{MaxReplicas: e.MaxReplicas, Namespace: e.Namespace, Revision: doc.Revision}
	steps := scale.Plan(pools, toMDs(records), listErr, policy)
	if records != nil && e.confirm(ctx, steps, records) {
		steps = scale.Plan(pools, toMDs(records), nil, policy)
	}
	// What this revision reported before the pass, to tell news from a
	// repeat once the in-progress mark has passed through the store.
	before := map[string]wire.Action{}
	for _, a := range e.Store.Snapshot() {
		if a.Type == wire.ActionScale {
			before[a.Target] = a
		}
	}
	// outcomes holds only the reports of steps that wrote or were queued:
	// scale.Retry reads refusals from the plan, and they never retry.
	outcomes := make([]wire.Action, 0, len(steps))
	halted := false
	for _, st := range steps {
		e.step()
		if halted {
			// §4.1 step 0: every later pool waits for the next poll.
			a := scale.Queued(st.Action.Target, doc.Revision)
			e.Store.Upsert(a)
			outcomes = append(outcomes, a)
			continue
		}
		e.Store.Upsert(st.Action)
		final, halt := st.Action, false
		if st.Patch != nil {
			final, halt = scale.Outcome(st, e.patch(ctx, st.Patch))
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
	return scale.Retry(steps, outcomes)
}

func (e *Executor) step() {
	if e.Progress != nil {
		e.Progress.Step()
	}
}

// confirm re-reads, straight from the apiserver, every MachineDeployment
// behind a final decision that writes nothing, since the cache may lag a
// change that would alter it. It refreshes records in place and reports
// whether anything differed, so the caller can plan again on fresh data.
func (e *Executor) confirm(ctx context.Context, steps []scale.Step, records map[string]*cluster.Record) bool {
	changed := false
	for _, st := range steps {
		a := st.Action
		final := st.Patch == nil && (a.Status == wire.StatusDone || strings.Contains(a.Detail, "no MachineDeployment"))
		if !final {
			continue
		}
		e.step()
		fresh, err := e.MDs.Get(ctx, a.Target)
		if err != nil {
			continue // the cached view stands; the next pass reads again
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
	return changed
}

func toMDs(records map[string]*cluster.Record) map[string]scale.MD {
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

// patch writes one decided scaling patch under the fence. A lost lease
// fails this pool and halts the pass; the elector ends the term on its own.
func (e *Executor) patch(ctx context.Context, p *scale.Patch) error {
	return e.patchBody(ctx, p.Namespace, p.MD, p.Body())
}

// patchBody sends one merge patch to a MachineDeployment under the fence.
func (e *Executor) patchBody(ctx context.Context, namespace, md string, body []byte) error {
	wctx, cancel, err := e.Fence.Write(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	return e.Patcher.PatchMD(wctx, namespace, md, body)
}

// event records every act and refusal on the MachineDeployment it concerns,
// so `kubectl describe machinedeployment` says what the agent did and why.
func (e *Executor) event(ctx context.Context, records map[string]*cluster.Record, a wire.Action) {
	md, ok := records[a.Target]
	if !ok || a.Status == wire.StatusPending && a.Detail == "" {
		return
	}
	reason := map[string]string{
		wire.StatusDone: "KubehzScaled", wire.StatusFailed: "KubehzRefused",
		wire.StatusInProgress: "KubehzScaling", wire.StatusPending: "KubehzPending",
	}[a.Status]
	if a.Status == wire.StatusDone && strings.HasPrefix(a.Detail, "already at") {
		reason = "KubehzInSync"
	}
	e.Events.MDEvent(ctx, md, a.Status == wire.StatusFailed, reason, eventMessage(a))
}
