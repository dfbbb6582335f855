package safety_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

var (
	_ execute.Fence     = (*fence)(nil)
	_ execute.Patcher   = (*apiserver)(nil)
	_ execute.Deleter   = (*apiserver)(nil)
	_ execute.Pods      = (*apiserver)(nil)
	_ execute.Version   = (*apiserver)(nil)
	_ execute.Recorder  = (*apiserver)(nil)
	_ execute.Publisher = (*apiserver)(nil)
	_ execute.MDs       = mdCache{}
	_ execute.Machines  = machineCache{}
	_ execute.Nodes     = nodeCache{}
)

var errLostLease = errors.New("lost lease: held by another replica")

type grantKey struct{}

// fence grants writes while this replica leads; refuseAfter < 0 means it
// never starts refusing within the pass, else it grants that many more.
type fence struct {
	leading     bool
	refuseAfter int
	next        int
	live        map[int]bool // grants handed out and not yet cancelled
	refused     int
}

func (f *fence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.leading && f.refuseAfter == 0 {
		f.leading = false // the lease was lost mid-pass
	}
	if !f.leading {
		f.refused++
		return nil, nil, errLostLease
	}
	if f.refuseAfter > 0 {
		f.refuseAfter--
	}
	f.next++
	id := f.next
	f.live[id] = true
	wctx, cancel := context.WithCancel(context.WithValue(ctx, grantKey{}, id))
	return wctx, func() { delete(f.live, id); cancel() }, nil
}

// granted says ctx carries a grant that is still live while leading.
func (f *fence) granted(ctx context.Context) bool {
	id, ok := ctx.Value(grantKey{}).(int)
	return ok && f.live[id] && f.leading && ctx.Err() == nil
}

// faults are one scenario's failure rates, each a probability per call.
type faults struct {
	ensure, get, pods, write, version, publish float64
}

// apiserver is the fake cluster API the executor's seams reach: it answers
// reads from the world, hands every write to the checker before applying
// it, and fails calls at the scenario's rates.
type apiserver struct {
	w     *world
	r     *rand.Rand
	f     faults
	fence *fence
	check *checker
	reads int       // every read call, for the closed-gate check
	trace *[]string // every answered write, when a test keeps them
}

func (a *apiserver) fail(rate float64) bool { return rate > 0 && chance(a.r, rate) }

var (
	mdGR      = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}
	machineGR = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machines"}
	podGR     = schema.GroupResource{Resource: "pods"}
)

func notFound(gr schema.GroupResource, name string) error { return apierrors.NewNotFound(gr, name) }

func conflict(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified"))
}

// writeError is a random failure of a write: RBAC, a stale precondition,
// an object gone, or a blip.
func (a *apiserver) writeError(gr schema.GroupResource, name string) error {
	switch a.r.IntN(4) {
	case 0:
		return apierrors.NewForbidden(gr, name, errors.New("RBAC says no"))
	case 1:
		return conflict(gr, name)
	case 2:
		return notFound(gr, name)
	}
	return errors.New("connection reset by peer")
}

func (a *apiserver) ControlPlaneVersion(ctx context.Context) (string, error) {
	a.reads++
	if a.fail(a.f.version) {
		if chance(a.r, 0.5) {
			return "", nil
		}
		return "", errors.New("discovery failed")
	}
	return a.w.cp, nil
}

func (a *apiserver) PodsOn(ctx context.Context, nodeName string) ([]heal.Pod, error) {
	a.reads++
	if a.fail(a.f.pods) {
		if chance(a.r, 0.3) {
			return nil, apierrors.NewForbidden(podGR, "", errors.New("RBAC says no"))
		}
		return nil, errors.New("list pods: timeout")
	}
	var out []heal.Pod
	for _, p := range a.w.pods {
		if p.node == nodeName {
			out = append(out, heal.Pod{Namespace: p.ns, Name: p.name, UID: types.UID(p.uid), NodeName: p.node, Terminating: p.terminating})
		}
	}
	return out, nil
}

func (a *apiserver) Event(context.Context, execute.Object, bool, string, string) {}

func (a *apiserver) Publish(context.Context, int64, []wire.Action) error {
	if a.fail(a.f.publish) {
		return errors.New("configmap write failed")
	}
	return nil
}

// mdCache is the MachineDeployment cache over the world: always current.
type mdCache struct{ a *apiserver }

func (c mdCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("MachineDeployments did not sync")
	}
	return nil
}

func (c mdCache) Stop() {}

func (c mdCache) List() map[string]*cluster.Record {
	c.a.reads++
	out := make(map[string]*cluster.Record, len(c.a.w.mds))
	for _, d := range c.a.w.mds {
		out[d.name] = d.record()
	}
	return out
}

func (c mdCache) Get(ctx context.Context, name string) (*cluster.Record, error) {
	c.a.reads++
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("get: timeout")
	}
	if d := c.a.w.md(name); d != nil {
		return d.record(), nil
	}
	return nil, nil
}

// Fresh is a direct List: the world as it is.
func (c mdCache) Fresh(ctx context.Context) (map[string]*cluster.Record, error) {
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return c.List(), nil
}

func (d *md) record() *cluster.Record {
	r := &cluster.Record{Namespace: namespace, Name: d.name, ResourceVersion: strconv.Itoa(d.rv),
		UID: types.UID("uid-md-" + d.name), Labels: cloneMap(d.labels), Annotations: cloneMap(d.annots),
		TemplateLabels: cloneMap(d.tpl), TemplateSpecMetaLabels: cloneMap(d.tplMeta),
		TemplateSpecLabels: cloneMap(d.tplSpec), Kubelet: d.kubelet}
	if d.replicas != nil {
		n := *d.replicas
		r.Replicas = &n
	}
	if len(d.selector) > 0 {
		r.Selector = labels.SelectorFromSet(d.selector)
	}
	return r
}

// machineCache is the Machine cache over the world.
type machineCache struct{ a *apiserver }

func (c machineCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("Machines did not sync")
	}
	return nil
}

func (c machineCache) Stop() {}

func (c machineCache) List() []*cluster.Machine {
	c.a.reads++
	out := make([]*cluster.Machine, 0, len(c.a.w.machines))
	for _, m := range c.a.w.machines {
		specKeys := map[string]string{}
		if m.specCP {
			specKeys[labelMaster] = ""
		}
		out = append(out, &cluster.Machine{Namespace: namespace, Name: m.name, ResourceVersion: strconv.Itoa(m.rv),
			UID: types.UID(m.uid), Labels: cloneMap(m.labels), MachineSets: append([]string(nil), m.machineSets...),
			ControlPlane: hasControlPlaneKey(m.labels) || hasControlPlaneKey(specKeys),
			Created:      m.created, Deleting: m.deleting, NodeName: m.node, Kubelet: m.kubelet})
	}
	return out
}

// Fresh is a direct List: the world as it is.
func (c machineCache) Fresh(ctx context.Context) ([]*cluster.Machine, error) {
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return c.List(), nil
}

// nodeCache is the Node cache over the world, and its direct read.
type nodeCache struct{ a *apiserver }

func (c nodeCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("Nodes did not sync")
	}
	return nil
}

func (c nodeCache) Stop() {}

func (c nodeCache) List() map[string]*cluster.Node {
	c.a.reads++
	out := make(map[string]*cluster.Node, len(c.a.w.nodes))
	for _, n := range c.a.w.nodes {
		out[n.name] = n.record()
	}
	return out
}

func (c nodeCache) Get(ctx context.Context, name string) (*cluster.Node, error) {
	c.a.reads++
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("get node: timeout")
	}
	if n := c.a.w.node(name); n != nil {
		return n.record(), nil
	}
	return nil, nil
}

// Fresh is a direct List: the world as it is.
func (c nodeCache) Fresh(ctx context.Context) (map[string]*cluster.Node, error) {
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return c.List(), nil
}

func (n *node) record() *cluster.Node {
	return &cluster.Node{Name: n.name, ControlPlane: hasControlPlaneKey(n.labels), Ready: n.ready, Since: n.since}
}
