package safety_test

import (
	"context"
	"errors"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
)

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
	return r
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
