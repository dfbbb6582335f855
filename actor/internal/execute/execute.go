// Package execute is the actor's executor: the execution gate of the
// desired-state document, then each authorized capability, every write
// fenced by the lease, every act and refusal reported and recorded as an
// Event on the object it concerns.
package execute

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// Executor runs one pass per desired-state document.
type Executor struct {
	Base        context.Context // bounds the informers' lives
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
	Machines     Machines
	Nodes        Nodes
	Deleter      Deleter
	Pods         Pods
	ControlPlane ControlPlane
	// HealMemory is this term's healing memory. The executor is built when
	// a replica becomes leader, so its cooldown baseline is the term's
	// start.
	HealMemory *heal.Memory
	// EvictionTimeout is KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS.
	EvictionTimeout time.Duration
	Now             func() time.Time

	// CPGate holds this term's reads of the control plane's version; the
	// zero value, which a new term starts from, vouches for nothing yet.
	CPGate upgrade.ControlPlaneGate

	// HealLimits are the local limits of KUBEHZ_HEAL_*: the document's
	// healing policy is tightened to them, never the other way.
	HealLimits heal.Limits

	// rolls remembers, per pool, the kubelet version this term rolled from.
	rolls upgrade.RolledFrom
	// cpVouched is the version CPGate last vouched for, to log a change once.
	cpVouched string
	// evented is the last outcome recorded as an Event on each
	// MachineDeployment this term, by type and target (news).
	evented map[string]wire.Action

	// landed is true once the store's current reports are in the ConfigMap.
	// It starts false, so a new leader publishes its own empty document
	// before anything else, and a publish that fails leaves it false until
	// a later one lands; until then no pass acts (caughtUp).
	landed bool
}

// Execute applies the gate and the authorized capabilities; it reports
// whether the next poll tick should run another pass even without a change.
func (e *Executor) Execute(ctx context.Context, doc desired.Document) bool {
	x := doc.Execution
	if !x.Scaling && !x.Upgrades && !doc.HealingArmed() {
		// Nothing is authorized: no API call, not even a List.
		e.withdrawAll()
		e.publish(ctx, 0)
		return false
	}
	if !e.landed && !e.caughtUp(ctx) {
		return true
	}
	e.Store.Begin(doc.Revision)
	// A capability switched off loses its reports at once, even when the
	// revision did not change (closing docs/contract.md#g-2).
	if !x.Scaling {
		e.withdraw(wire.ActionScale)
	}
	if !x.Upgrades {
		e.withdraw(wire.ActionUpgrade)
	}
	if !doc.HealingArmed() {
		e.withdraw(wire.ActionHeal)
	}
	// Only what an authorized capability reads keeps watching; upgrades
	// read nothing until the document names a version.
	e.stopCaches(x.Scaling, x.Upgrades && hasTarget(doc), doc.HealingArmed())
	// Capacity first, then version rolls, then disruption: the healer
	// counts the machines the earlier steps set deleting, and those this
	// pass's scale-downs and roll take down before machine-controller
	// marks them (takedowns.in).
	retry, removing := false, takedowns{}
	if x.Scaling {
		retry, removing = e.scale(ctx, doc)
	}
	if x.Upgrades {
		again, rolled := e.upgrade(ctx, doc)
		retry = retry || again
		removing.rolled = rolled
	}
	if doc.HealingArmed() {
		e.heal(ctx, doc, removing)
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

// Clear drops every report: the platform no longer authorizes anything (a 4xx
// from /desired, or a document that failed validation; closing
// docs/contract.md#g-1).
func (e *Executor) Clear(reason string) {
	if e.withdrawAll() {
		e.Log.Warn("Reports cleared: nothing is authorized", "reason", reason)
	}
	e.publish(e.Base, 0)
}

// Flush publishes the reports: the poller calls it on every tick that runs
// no pass, 304s and failed fetches included, so a report write lost to an
// apiserver blip, or a ConfigMap someone emptied or overwrote since, is
// written again within one poll interval rather than when the document
// next changes. A ConfigMap that already holds them costs one read.
func (e *Executor) Flush(ctx context.Context) {
	e.publish(ctx, e.Store.Revision())
}

// caughtUp writes the reports the ConfigMap still lacks, and reports
// whether they landed: no pass acts before they do
// (docs/contract.md#leadership). At a term's start that is its own empty
// report, without which a previous leader's reports would stand while this
// one acts; later, a pass whose reports could not be written (RBAC
// tightened, an admission webhook, conflicts that do not end) would
// otherwise go on deleting and scaling while the platform reads the older
// reports as current.
func (e *Executor) caughtUp(ctx context.Context) bool {
	e.publish(ctx, e.Store.Revision())
	if !e.landed {
		e.Log.Warn("Not acting: the action reports cannot be written; trying again on the next poll tick")
	}
	return e.landed
}

func (e *Executor) publish(ctx context.Context, rev int64) {
	e.step()
	// The wire carries 20 reports; the newest outcomes win
	// (docs/contract.md#g-3).
	err := e.Publisher.Publish(ctx, e.Store.Revision(), e.Store.Newest(wire.MaxActions, report.Sendable))
	e.landed = err == nil
	if err != nil && !errors.Is(err, context.Canceled) {
		e.Log.Error("Cannot publish action reports; writing them again on the next poll tick", "err", err, "revision", rev)
	}
}

// targets is what a pass decided about: the reports of a capability's other
// targets go, done ones excepted, so a document that names new pools at the
// same revision replaces the old reports instead of adding to them without
// end.
func targets[S any](steps []S, target func(S) string) map[string]bool {
	out := make(map[string]bool, len(steps))
	for _, st := range steps {
		out[target(st)] = true
	}
	return out
}

// reported returns this revision's reports of one type, by target, to tell
// news from a repeat.
func (e *Executor) reported(typ string) map[string]wire.Action {
	out := map[string]wire.Action{}
	for _, a := range e.Store.Snapshot() {
		if a.Type == typ {
			out[a.Target] = a
		}
	}
	return out
}

func (e *Executor) step() {
	if e.Progress != nil {
		e.Progress.Step()
	}
}
