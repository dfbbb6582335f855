package execute

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/wire"
)

// upgrade runs one upgrade pass. It reports whether it wants a retry, and,
// by pool, how many Machines the roll it started may take down at once
// (upgrade.Patch.Removes).
func (e *Executor) upgrade(ctx context.Context, doc desired.Document) (bool, map[string]int) {
	if !hasTarget(doc) || len(doc.WorkerPools) == 0 {
		e.Store.Prune(wire.ActionUpgrade, nil)
		return false, nil
	}
	p := upgrade.Policy{Target: *doc.KubernetesVersion, Namespace: e.Namespace, Revision: doc.Revision}
	for _, pool := range doc.WorkerPools {
		p.Pools = append(p.Pools, pool.Name)
	}
	if e.rolls == nil {
		e.rolls = upgrade.RolledFrom{}
	}
	o := e.observeUpgrade(ctx, false)
	// Planned on the caches, with a copy of the memory: a stale cache must
	// not rewrite what this term remembers.
	mem := maps.Clone(e.rolls)
	steps, retry := upgrade.Plan(o, p, mem)
	if rolls(steps) {
		// One pool at a time rests on every pool's Machines and template: a
		// cache lagging this term's own last patch would show that pool
		// idle. A roll starts only on a direct read.
		e.step()
		o = e.observeUpgrade(ctx, true)
		mem = maps.Clone(e.rolls)
		steps, retry = upgrade.Plan(o, p, mem)
	}
	e.rolls = mem
	before := e.reported(wire.ActionUpgrade)
	halted, removing := false, map[string]int{}
	for _, st := range steps {
		e.step()
		if halted {
			e.Store.Upsert(upgrade.Queued(st.Action.Target, doc.Revision))
			continue
		}
		e.Store.Upsert(st.Action)
		if st.Patch == nil {
			if prev, ok := before[st.Action.Target]; !ok || prev != st.Action {
				e.upgradeEvent(ctx, st.Action) // only news: a repeat would flood
			}
			continue
		}
		sent, err := e.sendPatch(ctx, st.Patch.Namespace, st.Patch.MD, st.Patch.Body())
		if n := st.Patch.Removes(sent, err); n > 0 {
			removing[st.Patch.MD] += n
		}
		final, halt := upgrade.Outcome(st, err)
		if err == nil {
			upgrade.Started(e.rolls, st.Patch)
		}
		e.Store.Upsert(final)
		e.upgradeEvent(ctx, final)
		halted = halt
		retry = retry || halt
		e.Log.Info("Upgrade", "machineDeployment", e.Namespace+"/"+st.Patch.MD, "from", st.Patch.From,
			"to", st.Patch.Target, "status", final.Status, "detail", final.Detail)
	}
	e.Store.Prune(wire.ActionUpgrade, targets(steps, func(st upgrade.Step) string { return st.Action.Target }))
	return retry, removing
}

// upgradeEvent records a roll's start, each step, its end or a refusal on
// the MachineDeployment, once per change of its report.
func (e *Executor) upgradeEvent(ctx context.Context, a wire.Action) {
	reason, warning := "", false
	switch a.Status {
	case wire.StatusDone:
		reason = "KubehzUpgraded"
	case wire.StatusFailed:
		reason, warning = "KubehzRefused", true
	case wire.StatusInProgress:
		reason = "KubehzUpgrading"
	default:
		return
	}
	if md, ok := e.MDs.List()[a.Target]; ok && e.news(a) {
		e.Events.Event(ctx, mdObject(md), warning, reason, eventMessage(a))
	}
}

// hasTarget reports whether the document names a version to roll to.
func hasTarget(doc desired.Document) bool {
	return doc.KubernetesVersion != nil && strings.TrimSpace(*doc.KubernetesVersion) != ""
}

func rolls(steps []upgrade.Step) bool {
	for _, st := range steps {
		if st.Patch != nil {
			return true
		}
	}
	return false
}

// observeUpgrade reads what the planner needs, from the caches or, when
// direct, straight from the apiserver; a failed read is handed to the
// planner, which reports every pool failed and retries.
func (e *Executor) observeUpgrade(ctx context.Context, direct bool) upgrade.Observed {
	if err := e.ensure(ctx, false); err != nil {
		return failedRead(err)
	}
	w := e.cached(false)
	if direct {
		var err error
		if w, err = e.fresh(ctx, false); err != nil {
			return failedRead(err)
		}
	}
	o := upgrade.Observed{MDs: make(map[string]upgrade.MD, len(w.mds))}
	for name, r := range w.mds {
		o.MDs[name] = upgrade.MD{Name: r.Name, ResourceVersion: r.ResourceVersion, Kubelet: r.Kubelet,
			Replicas: r.Replicas, PoolLabels: poolLabels(r), Annotations: r.Annotations, Rollout: r.Rollout}
	}
	for _, m := range w.machines {
		o.Machines = append(o.Machines, upgradeMachine(m, w))
	}
	e.step()
	o.ControlPlane, o.ControlPlaneWhy = e.controlPlane(ctx)
	return o
}

// failedRead is what the planner sees of a read that failed: the error of
// the MachineDeployments or of the Machines, whichever failed.
func failedRead(err error) upgrade.Observed {
	var re *readError
	if !errors.As(err, &re) {
		return upgrade.Observed{MDsErr: err}
	}
	if re.from == fromMachines {
		return upgrade.Observed{MachinesErr: re.err}
	}
	return upgrade.Observed{MDsErr: re.err}
}

// controlPlane samples every source of the control plane's version and
// returns the version the gate vouches for: the minimum, once it has held
// over several reads. While it vouches for none it returns "", and the
// planner refuses every roll as "control plane version unknown" and
// retries. One upgraded apiserver answering /version never opens the gate
// while another source is older.
//
// why, for the report, names a source that cannot be read, or says the
// version has not held long enough. It never carries the running count of
// reads: a detail that changes every pass is news every pass, and each news
// costs an Event.
func (e *Executor) controlPlane(ctx context.Context) (vouched, why string) {
	readings, err := e.ControlPlane.ControlPlaneVersions(ctx)
	vouched, gateWhy := e.CPGate.Observe(upgrade.VersionSample{At: e.now(), Readings: readings, Err: err})
	oldest, source, unreadable := upgrade.MinimumVersion(readings)
	switch {
	case vouched != "":
		if vouched != e.cpVouched {
			e.Log.Info("Control plane version trusted for upgrades", "version", vouched, "oldestSource", source,
				"sources", len(readings))
		}
	case err != nil || unreadable != "":
		e.Log.Warn("Control plane version unknown; upgrades wait for it", "why", gateWhy)
		why = gateWhy
	default:
		e.Log.Debug("Control plane version not yet stable; upgrades wait for it", "version", oldest,
			"oldestSource", source, "why", gateWhy)
		why = fmt.Sprintf("%s is trusted once every source agrees on it for %d reads over %s", oldest,
			upgrade.GateSamples, upgrade.GateSpan)
	}
	e.cpVouched = vouched
	return vouched, why
}

// upgradeMachine counts m toward the one pool that owns it; a machine
// several pools could own counts toward none, but still shows each of them
// as rolling if its kubelet differs.
func upgradeMachine(m *cluster.Machine, w world) upgrade.Machine {
	return upgrade.Machine{Name: m.Name, Pool: w.owner(m), Candidates: w.resolver.Candidates(m.Labels, m.MachineSets),
		Kubelet: m.Kubelet, NodeName: m.NodeName, Deleting: m.Deleting}
}
