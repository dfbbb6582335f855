package execute

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/guard"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/desired"
	"kubehz.dev/agent/shared/machinepool"
	"kubehz.dev/agent/shared/wire"
)

// Machines is the on-demand Machine cache.
type Machines interface {
	Ensure(base, ctx context.Context) error
	Stop()
	List() []*cluster.Machine
}

// Nodes is the on-demand Node cache, and a direct read of one Node.
type Nodes interface {
	Ensure(base, ctx context.Context) error
	Stop()
	List() map[string]*cluster.Node
	Get(ctx context.Context, name string) (*cluster.Node, error)
}

// Deleter sends the two deletes healing makes: a Machine with UID and
// resourceVersion preconditions, and a stuck pod with grace 0 and a UID
// precondition.
type Deleter interface {
	DeleteMachine(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string) error
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
}

// Pods lists the pods bound to one node.
type Pods interface {
	PodsOn(ctx context.Context, node string) ([]heal.Pod, error)
}

// world is one read of what healing and upgrades decide on.
type world struct {
	mds      map[string]*cluster.Record
	machines []*cluster.Machine
	nodes    map[string]*cluster.Node
	resolver machinepool.Resolver
}

// read ensures the caches a capability needs and reads them. A failed read
// is returned, not reported: the pass is skipped and the next tick retries.
func (e *Executor) read(ctx context.Context, nodes bool) (world, error) {
	if err := e.MDs.Ensure(e.Base, ctx); err != nil {
		return world{}, err
	}
	if err := e.Machines.Ensure(e.Base, ctx); err != nil {
		return world{}, err
	}
	w := world{mds: e.MDs.List(), machines: e.Machines.List()}
	if nodes {
		if err := e.Nodes.Ensure(e.Base, ctx); err != nil {
			return world{}, err
		}
		w.nodes = e.Nodes.List()
	}
	pools := make([]machinepool.Pool, 0, len(w.mds))
	for _, r := range w.mds {
		pools = append(pools, machinepool.Pool{Name: r.Name, Selector: r.Selector})
	}
	w.resolver = machinepool.NewResolver(pools)
	return w, nil
}

// observed is the world as healing's pure decisions see it.
func (w world) observed() heal.Observed {
	o := heal.Observed{
		Machines: make([]heal.Machine, 0, len(w.machines)),
		Nodes:    make(map[string]heal.Node, len(w.nodes)),
		Pools:    make(map[string]heal.Pool, len(w.mds)),
	}
	for _, m := range w.machines {
		pool := owner(w.resolver, m)
		o.Machines = append(o.Machines, heal.Machine{
			Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, Pool: pool,
			ControlPlane: m.ControlPlane, Created: m.Created, Deleting: m.Deleting, NodeName: m.NodeName,
		})
	}
	for name, n := range w.nodes {
		o.Nodes[name] = heal.Node{Name: n.Name, ControlPlane: n.ControlPlane, Ready: n.Ready, Since: n.Since}
	}
	for name, r := range w.mds {
		o.Pools[name] = heal.Pool{ControlPlane: guard.ControlPlaneReason(poolOf(r)), Autoscaler: guard.AutoscalerKey(r.Annotations)}
	}
	return o
}

// owner is the one pool that could own m, or "" when none or several could:
// overlapping selectors, or a selector and a MachineSet owner that disagree,
// might dress a control-plane or autoscaler machine as a worker, so such a
// machine is treated as unowned and never deleted.
func owner(r machinepool.Resolver, m *cluster.Machine) string {
	if c := r.Candidates(m.Labels, m.MachineSets); len(c) == 1 {
		return c[0]
	}
	return ""
}

func poolOf(r *cluster.Record) guard.Pool {
	return guard.Pool{Name: r.Name, Labels: r.Labels, TemplateLabels: r.TemplateLabels,
		TemplateSpecMetaLabels: r.TemplateSpecMetaLabels, TemplateSpecLabels: r.TemplateSpecLabels}
}

// heal runs one P5 pass: the unwedge first, so it fires even when nothing
// new is unhealthy, then detection and the deletes it allows.
func (e *Executor) heal(ctx context.Context, doc desired.Document) {
	w, err := e.read(ctx, true)
	if err != nil {
		e.Log.Warn("Healing skipped this pass: cannot read the cluster; retrying next poll", "err", err)
		return
	}
	now := e.now()
	o := w.observed()
	e.unwedge(ctx, o, doc.Revision, now)
	policy := heal.PolicyFrom(doc.Healing, doc.Revision)
	policy.Named = make(map[string]bool, len(doc.WorkerPools))
	for _, p := range doc.WorkerPools {
		policy.Named[p.Name] = true
	}
	d := heal.Decide(o, policy, e.Memory, now)
	e.Store.Prune(wire.ActionHeal, d.Keep)
	if d.Storm {
		e.Log.Warn("Storm brake: too many unhealthy workers, deleting nothing",
			"candidates", len(d.Steps), "unbackedNodes", d.Unbacked, "maxUnhealthy", doc.Healing.MaxUnhealthy)
	}
	halted := false
	for _, st := range d.Steps {
		e.step()
		if halted {
			e.Store.Upsert(heal.Queued(st.Action.Target, doc.Revision))
			continue
		}
		e.Store.Upsert(st.Action)
		if st.Delete == nil {
			continue
		}
		final, result := e.deleteMachine(ctx, st)
		e.Store.Upsert(final)
		e.Memory.Record(st.Delete, result, now)
		halted = result == heal.Failed
		e.Log.Info("Heal", "machine", e.Namespace+"/"+st.Delete.Machine, "pool", st.Delete.Pool,
			"status", final.Status, "detail", final.Detail)
	}
}

// deleteMachine re-reads a dead node before acting on it, then sends the
// decided delete under the fence.
func (e *Executor) deleteMachine(ctx context.Context, st heal.Step) (wire.Action, heal.Result) {
	d := st.Delete
	if d.Node != "" {
		fresh, err := e.Nodes.Get(ctx, d.Node)
		if err != nil {
			return heal.NodeChanged(st, "cannot re-read node "+d.Node+": "+guard.Sanitize(err.Error())), heal.Stale
		}
		var n *heal.Node
		if fresh != nil {
			n = &heal.Node{Name: fresh.Name, ControlPlane: fresh.ControlPlane, Ready: fresh.Ready, Since: fresh.Since}
		}
		if !heal.StillUnhealthy(d, n) {
			return heal.NodeChanged(st, "node "+d.Node+" recovered or changed since it was read"), heal.Stale
		}
	}
	wctx, cancel, err := e.Fence.Write(ctx)
	if err == nil {
		defer cancel()
		err = e.Deleter.DeleteMachine(wctx, e.Namespace, d.Machine, d.UID, d.ResourceVersion)
	}
	return heal.Outcome(st, err, e.Namespace)
}

// unwedge force-deletes the pods stuck Terminating on the dead node of a
// machine this term deleted, once per machine (§4.5).
func (e *Executor) unwedge(ctx context.Context, o heal.Observed, rev int64, now time.Time) {
	if e.Pods == nil {
		return // no pod source: nothing to unwedge with
	}
	drop, due := heal.Due(e.Memory, o, e.EvictionTimeout, now)
	for _, name := range drop {
		delete(e.Memory.Tracked, name)
	}
	for _, name := range due {
		t := e.Memory.Tracked[name]
		e.step()
		pods, err := e.Pods.PodsOn(ctx, t.Node)
		if apierrors.IsForbidden(err) {
			t.Attempted = true
			e.Store.Upsert(heal.UnwedgeForbidden(name, t, "list", now, rev))
			e.Log.Error("Eviction unwedge forbidden: cannot list pods; never retried for this machine", "machine", name, "node", t.Node, "err", err)
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
		deleted, failed, forbidden, fenced := e.forceDelete(ctx, stuck)
		if fenced && deleted == 0 {
			// The lease check failed before any pod went, which is not the
			// unwedge failing: keep the one attempt for the next pass.
			t.Attempted = false
			e.Log.Warn("Eviction unwedge deferred: the write fence refused; trying again next poll", "machine", name, "node", t.Node)
			continue
		}
		a := heal.Unwedged(name, t, deleted, failed, now, rev)
		if forbidden {
			a = heal.UnwedgeForbidden(name, t, "delete", now, rev)
			e.Log.Error("Eviction unwedge forbidden: cannot delete pods; never retried for this machine", "machine", name, "node", t.Node)
		}
		e.Store.Upsert(a)
		e.Log.Info("Eviction unwedge", "machine", name, "node", t.Node, "forceDeleted", deleted, "failed", failed)
	}
}

// forceDelete deletes each stuck pod with grace 0 and its UID as a
// precondition. A pod already gone or replaced (404, 409) is fine; a
// Forbidden stops at once, and so does a fence that refuses (fenced): the
// pods left are counted failed.
func (e *Executor) forceDelete(ctx context.Context, pods []heal.Pod) (deleted, failed int, forbidden, fenced bool) {
	for i, p := range pods {
		e.step()
		wctx, cancel, err := e.Fence.Write(ctx)
		if err != nil {
			return deleted, failed + len(pods) - i, false, true
		}
		err = e.Deleter.DeletePod(wctx, p.Namespace, p.Name, p.UID)
		cancel()
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		case apierrors.IsForbidden(err):
			return deleted, failed, true, false
		case errors.Is(err, context.Canceled):
			return deleted, failed + len(pods) - i, false, false // the term is ending
		default:
			failed++
		}
	}
	return deleted, failed, false, false
}
