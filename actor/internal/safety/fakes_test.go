package safety_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/wire"
)

var (
	_ execute.Fence        = (*fence)(nil)
	_ execute.Patcher      = (*apiserver)(nil)
	_ execute.Deleter      = (*apiserver)(nil)
	_ execute.Pods         = (*apiserver)(nil)
	_ execute.ControlPlane = (*apiserver)(nil)
	_ execute.Recorder     = (*apiserver)(nil)
	_ execute.Publisher    = (*apiserver)(nil)
	_ execute.MDs          = mdCache{}
	_ execute.Machines     = machineCache{}
	_ execute.Nodes        = nodeCache{}
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
	// lost is the rate of MachineDeployment patches and Machine deletes the
	// apiserver applies but whose answer never arrives (the connection
	// drops after the write).
	lost float64
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
	cache *informers // what each cache's List serves
	reads int        // every read call, for the closed-gate check
	trace *[]string  // every answered write, when a test keeps them

	// slowest is the longest one delete may take to answer; 0 answers at
	// once.
	slowest time.Duration
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

// mdCache is the MachineDeployment cache over the world: its List may lag,
// its Get and Fresh never do.
type mdCache struct{ a *apiserver }

func (c mdCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("MachineDeployments did not sync")
	}
	c.a.cache.mds.sync(c.a.cache.step)
	return nil
}

func (c mdCache) Stop() { c.a.cache.mds.running = false }

func (c mdCache) List() map[string]*cluster.MachineDeployment {
	c.a.reads++
	return mdRecords(c.a.cache.listMDs())
}

func mdRecords(mds []*md) map[string]*cluster.MachineDeployment {
	out := make(map[string]*cluster.MachineDeployment, len(mds))
	for _, d := range mds {
		out[d.name] = d.record()
	}
	return out
}

func (c mdCache) Get(ctx context.Context, name string) (*cluster.MachineDeployment, error) {
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
func (c mdCache) Fresh(ctx context.Context) (map[string]*cluster.MachineDeployment, error) {
	c.a.reads++
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return mdRecords(c.a.w.mds), nil
}

func (d *md) record() *cluster.MachineDeployment {
	r := &cluster.MachineDeployment{Namespace: namespace, Name: d.name, ResourceVersion: strconv.Itoa(d.rv),
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
	r.Rollout = upgrade.Rollout{Type: d.strategy.kind, Unreadable: d.strategy.unreadable,
		MaxSurge: bound(d.strategy.maxSurge), MaxUnavailable: bound(d.strategy.maxUnavailable)}
	return r
}

// bound is a strategy bound as the cache decodes it.
func bound(v any) *intstr.IntOrString {
	switch v := v.(type) {
	case int:
		b := intstr.FromInt32(int32(v)) //nolint:gosec // the generator's counts are tiny
		return &b
	case string:
		b := intstr.FromString(v)
		return &b
	}
	return nil
}

// machineCache is the Machine cache over the world: its List may lag, its
// Fresh never does.
type machineCache struct{ a *apiserver }

func (c machineCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("Machines did not sync")
	}
	c.a.cache.machines.sync(c.a.cache.step)
	return nil
}

func (c machineCache) Stop() { c.a.cache.machines.running = false }

func (c machineCache) List() []*cluster.Machine {
	c.a.reads++
	return machineRecords(c.a.cache.listMachines())
}

func machineRecords(machines []*machine) []*cluster.Machine {
	out := make([]*cluster.Machine, 0, len(machines))
	for _, m := range machines {
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
	c.a.reads++
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return machineRecords(c.a.w.machines), nil
}

// nodeCache is the Node cache over the world: its List may lag, its Get
// and Fresh never do.
type nodeCache struct{ a *apiserver }

func (c nodeCache) Ensure(base, ctx context.Context) error {
	c.a.reads++
	if c.a.fail(c.a.f.ensure) {
		return errors.New("Nodes did not sync")
	}
	c.a.cache.nodes.sync(c.a.cache.step)
	return nil
}

func (c nodeCache) Stop() { c.a.cache.nodes.running = false }

func (c nodeCache) List() map[string]*cluster.Node {
	c.a.reads++
	return nodeRecords(c.a.cache.listNodes())
}

func nodeRecords(nodes []*node) map[string]*cluster.Node {
	out := make(map[string]*cluster.Node, len(nodes))
	for _, n := range nodes {
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
	c.a.reads++
	if c.a.fail(c.a.f.get) {
		return nil, errors.New("list: timeout")
	}
	return nodeRecords(c.a.w.nodes), nil
}

func (n *node) record() *cluster.Node {
	return &cluster.Node{Name: n.name, ControlPlane: hasControlPlaneKey(n.labels), Ready: n.ready, Since: n.since,
		OwnerUID: types.UID(n.ownerUID), OwnerMachine: n.ownerMachine}
}

// view is the cluster as an informer heard of it at one moment: copies of
// the world's objects, which the world replaces rather than mutates.
type view struct {
	mds      []*md
	machines []*machine
	nodes    []*node
}

// snapshot copies the objects the caches serve, as they stand now, into
// one array per kind: it runs every step, so it allocates little.
func (w *world) snapshot() *view {
	return &view{mds: copyAll(w.mds), machines: copyAll(w.machines), nodes: copyAll(w.nodes)}
}

func copyAll[T any](xs []*T) []*T {
	vals, out := make([]T, len(xs)), make([]*T, len(xs))
	for i, x := range xs {
		vals[i] = *x
		out[i] = &vals[i]
	}
	return out
}

// informer is one cache's watch. It serves either the world as it is, or
// the snapshot taken at the start of step at, and never goes back in time.
// Until step until, it keeps lagging the same way: a broken watch stays
// frozen where it is, a slow one trails the world by delay steps.
type informer struct {
	running bool
	at      int // the snapshot served; live when -1
	seen    int // the oldest snapshot it may serve next
	until   int
	frozen  bool
	delay   int
}

// The chances, per step and running cache that is not already lagging, that
// its watch breaks, turns slow, or misses only the writes of the coming
// pass; otherwise it is current. With these, about a quarter of all steps
// serve some pass a List that differs from the world.
const (
	lagBreak = 0.10
	lagSlow  = 0.20
	lagOwn   = 0.10
)

// tick chooses what the informer serves during step. It draws the same
// numbers whatever it chooses, so the scenario's other draws do not depend
// on it.
func (i *informer) tick(r *rand.Rand, step int) {
	u, back, steps := r.Float64(), 1+r.IntN(3), 2+r.IntN(5)
	switch {
	case !i.running:
		return
	case step < i.until && i.frozen: // still broken: at stays
	case step < i.until:
		i.at = max(i.seen, step-i.delay)
	case u < lagBreak:
		// Frozen from this step's start, or up to two before, for 2..6 steps.
		i.at, i.until, i.frozen = max(i.seen, step+1-back), step+steps, true
	case u < lagBreak+lagSlow:
		// Events arrive 1..3 steps late, for 2..6 steps.
		i.delay, i.until, i.frozen = back, step+steps, false
		i.at = max(i.seen, step-i.delay)
	case u < lagBreak+lagSlow+lagOwn:
		i.at = step
	default:
		i.at = -1
	}
	i.seen = i.at
	if i.at < 0 {
		i.seen = step + 1
	}
}

// sync is a start's first List: whatever a stopped informer lagged
// before, a new one is current.
func (i *informer) sync(step int) {
	if !i.running {
		*i = informer{running: true, at: -1, seen: step + 1}
	}
}

// informers are the three caches' watches over one scenario's world.
type informers struct {
	w                    *world
	history              []*view // the world at the start of each step
	step                 int
	mds, machines, nodes informer
	lagged               bool // some List this step served other than the world
}

// beginStep records the world before step's pass and moves each watch.
func (in *informers) beginStep(r *rand.Rand, step int) {
	in.step, in.lagged = step, false
	in.history = append(in.history, in.w.snapshot())
	in.mds.tick(r, step)
	in.machines.tick(r, step)
	in.nodes.tick(r, step)
}

// served is what the informer serves now: a snapshot, or nil for the world.
func (in *informers) served(i *informer) *view {
	if i.at < 0 {
		return nil
	}
	return in.history[i.at]
}

func (in *informers) listMDs() []*md {
	v := in.served(&in.mds)
	if v == nil {
		return in.w.mds
	}
	in.lagged = in.lagged || !slices.EqualFunc(v.mds, in.w.mds, func(a, b *md) bool {
		return a.name == b.name && a.rv == b.rv
	})
	return v.mds
}

func (in *informers) listMachines() []*machine {
	v := in.served(&in.machines)
	if v == nil {
		return in.w.machines
	}
	in.lagged = in.lagged || !slices.EqualFunc(v.machines, in.w.machines, func(a, b *machine) bool {
		return a.name == b.name && a.uid == b.uid && a.rv == b.rv
	})
	return v.machines
}

// listNodes compares readiness too: a Node has no resourceVersion here.
func (in *informers) listNodes() []*node {
	v := in.served(&in.nodes)
	if v == nil {
		return in.w.nodes
	}
	in.lagged = in.lagged || !slices.EqualFunc(v.nodes, in.w.nodes, func(a, b *node) bool {
		return a.name == b.name && a.ready == b.ready && a.since.Equal(b.since)
	})
	return v.nodes
}
