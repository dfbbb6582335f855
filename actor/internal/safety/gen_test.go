package safety_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// start is the clock's first reading in every scenario.
var start = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

// poolNames are what MachineDeployments are called: workers, Hetzner-typed
// workers that must not look like control plane, and control-plane-looking
// names that must never be touched.
var poolNames = []string{
	"workers-a", "workers-b", "pool-c", "cpx31-workers", "edge", "gpu-pool",
	"master-1", "prod-cp-1", "controlplane", "my-control-plane",
}

var autoscalerKeys = []string{
	"cluster.k8s.io/cluster-api-autoscaler-node-group-min-size",
	"cluster.k8s.io/cluster-api-autoscaler-node-group-max-size",
	"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
	"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
}

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// cpLabels returns a label map that marks control plane, or nil.
func cpLabels(r *rand.Rand, p float64) map[string]string {
	if !chance(r, p) {
		return nil
	}
	return map[string]string{pick(r, []string{labelControlPlane, labelMaster}): pick(r, []string{"", "true"})}
}

// version is a kubelet-style version near the control plane's minor, spelt
// as a cluster may spell it.
func version(r *rand.Rand, minor int) string {
	return spellKubelet(r, fmt.Sprintf("v1.%d.%d", minor, r.IntN(10)))
}

// newWorld generates one random cluster.
func newWorld(r *rand.Rand) *world {
	cpMinor := 31 + r.IntN(6)
	w := &world{now: start, cp: fmt.Sprintf("v1.%d.%d", cpMinor, r.IntN(10))}
	if chance(r, 0.1) {
		w.cp += "+k3s1"
	}
	startControlPlane(r, w)
	names := slices.Clone(poolNames)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	names = names[:1+r.IntN(6)]
	slices.Sort(names)
	for _, name := range names {
		w.mds = append(w.mds, newMD(r, name, cpMinor))
	}
	for range r.IntN(13) {
		w.addMachine(newRandomMachine(r, w, cpMinor))
	}
	unlinkSome(r, w)
	for range r.IntN(3) { // nodes no Machine stands behind, some control plane
		n := w.joinNode(fmt.Sprintf("bare-%d", w.next()), cpLabels(r, 0.4))
		randomReadiness(r, w, n)
	}
	return w
}

func newMD(r *rand.Rand, name string, cpMinor int) *md {
	d := &md{name: name, rv: 1 + r.IntN(100), labels: cpLabels(r, 0.05), tpl: cpLabels(r, 0.05),
		tplMeta: cpLabels(r, 0.05), tplSpec: cpLabels(r, 0.05)}
	if chance(r, 0.9) {
		n := int64(r.IntN(5))
		d.replicas = &n
	}
	if chance(r, 0.15) {
		d.annots = map[string]string{pick(r, autoscalerKeys): "1"}
	}
	switch {
	case chance(r, 0.55):
		d.selector = map[string]string{"pool": name}
	case chance(r, 0.15):
		d.selector = map[string]string{"tier": "workers"} // overlaps other pools
	}
	d.strategy = randomStrategy(r)
	switch {
	case chance(r, 0.05):
		d.kubelet = ""
	case chance(r, 0.03):
		d.kubelet = "vX.Y"
	default:
		d.kubelet = version(r, cpMinor-r.IntN(5))
	}
	return d
}

// randomStrategy is absent half the time; otherwise bounds of every form
// machine-controller accepts, and now and then one it would not.
func randomStrategy(r *rand.Rand) strategy {
	switch {
	case chance(r, 0.5):
		return strategy{}
	case chance(r, 0.05):
		return strategy{unreadable: true}
	case chance(r, 0.05):
		return strategy{kind: "Recreate"}
	}
	bounds := []any{nil, 0, 1, 2, 3, "25%", "50%", "100%", "0%"}
	return strategy{kind: pick(r, []string{"", "RollingUpdate"}),
		maxSurge: pick(r, bounds), maxUnavailable: pick(r, bounds)}
}

// newRandomMachine is a Machine of any age and state, owned or not.
func newRandomMachine(r *rand.Rand, w *world, cpMinor int) *machine {
	var m *machine
	if d := pick(r, w.mds); chance(r, 0.9) {
		m = w.newMachineFor(d)
		if chance(r, 0.15) {
			m.kubelet = version(r, cpMinor-r.IntN(4)) // mid-roll, or left behind
		}
		if chance(r, 0.1) {
			m.machineSets = nil // selector only, or nothing
		}
	} else {
		m = &machine{name: fmt.Sprintf("stray-%d", w.next()), kubelet: version(r, cpMinor)}
		if chance(r, 0.5) {
			m.machineSets = []string{"gone-pool-abc12"}
		}
		m.uid = fmt.Sprintf("uid-%d", w.next())
	}
	m.rv = 1 + r.IntN(50)
	m.created = w.now.Add(-time.Duration(r.IntN(180)) * time.Minute)
	if chance(r, 0.05) {
		m.created = time.Time{}
	}
	if chance(r, 0.08) {
		m.labels = mergeLabels(m.labels, cpLabels(r, 1))
	}
	m.specCP = chance(r, 0.04)
	m.joinless = chance(r, 0.15)
	if !m.joinless {
		n := w.joinNode("n-"+m.name, cpLabels(r, 0.05))
		m.node = n.name
		randomReadiness(r, w, n)
		for range r.IntN(4) {
			w.pods = append(w.pods, &pod{ns: pick(r, []string{"default", "app", "kube-system"}),
				name: fmt.Sprintf("p-%d", w.next()), uid: fmt.Sprintf("pod-uid-%d", w.next()),
				node: n.name, terminating: chance(r, 0.3)})
		}
	}
	if chance(r, 0.1) {
		m.deleting, m.deletedAt = true, w.now.Add(-time.Duration(r.IntN(30))*time.Minute)
	}
	return m
}

// newMachineFor is what a MachineSet of d creates: d's selector labels, a
// MachineSet owner and d's kubelet.
func (w *world) newMachineFor(d *md) *machine {
	id := w.next()
	m := &machine{name: fmt.Sprintf("%s-ms-%05d", d.name, id), uid: fmt.Sprintf("uid-%d", id), rv: 1,
		labels: cloneMap(d.selector), machineSets: []string{d.name + "-ms"}, created: w.now, kubelet: d.kubelet}
	return m
}

func (w *world) joinNode(name string, labels map[string]string) *node {
	n := &node{name: name, labels: labels, ready: "True", since: w.now}
	w.nodes = append(w.nodes, n)
	return n
}

// randomReadiness gives a node a random Ready status and transition age.
func randomReadiness(r *rand.Rand, w *world, n *node) {
	n.ready = pick(r, []string{"True", "True", "True", "False", "Unknown", ""})
	n.since = w.now.Add(-time.Duration(r.IntN(3600)) * time.Second)
	if chance(r, 0.03) {
		n.since = time.Time{}
	}
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := cloneMap(a)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
