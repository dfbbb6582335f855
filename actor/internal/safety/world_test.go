package safety_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// namespace is the MachineDeployments' and Machines' namespace.
const namespace = "kube-system"

// The label keys that mark a control-plane object, spelt
// out here rather than taken from package refuse, so the checks do not trust
// the code they check.
const (
	labelControlPlane = "node-role.kubernetes.io/control-plane"
	labelMaster       = "node-role.kubernetes.io/master"
)

// md is one MachineDeployment as the fake apiserver stores it.
type md struct {
	name     string
	rv       int
	replicas *int64
	labels   map[string]string // metadata.labels
	annots   map[string]string // metadata.annotations
	tpl      map[string]string // spec.template.metadata.labels
	tplMeta  map[string]string // spec.template.spec.metadata.labels
	tplSpec  map[string]string // spec.template.spec.labels
	selector map[string]string // spec.selector.matchLabels; nil when absent
	kubelet  string            // spec.template.spec.versions.kubelet
	strategy strategy          // spec.strategy
}

// strategy is a MachineDeployment's spec.strategy. A bound is nil when
// absent, else a count (int) or a percentage ("25%").
type strategy struct {
	kind                     string // "" is RollingUpdate
	maxSurge, maxUnavailable any
	unreadable               bool // there, but not an object a strategy reads from
}

// machine is one Machine as the fake apiserver stores it.
type machine struct {
	name, uid   string
	rv          int
	labels      map[string]string // metadata.labels
	specCP      bool              // spec.metadata.labels carries a control-plane key
	machineSets []string          // owners of kind MachineSet
	created     time.Time         // zero when unknown
	deleting    bool
	deletedAt   time.Time
	node        string // status.nodeRef.name
	kubelet     string // spec.versions.kubelet
	joinless    bool   // its node never joins
}

// node is one Node.
type node struct {
	name   string
	labels map[string]string
	ready  string // the Ready condition's status, "" without one
	since  time.Time

	// machine-controller's marks naming the node's Machine, "" without.
	ownerUID     string // the machine-controller/owned-by label
	ownerMachine string // the cluster.k8s.io/machine annotation
	server       string // the Machine whose server joined as this node, while unlinked
}

// pod is one pod bound to a node.
type pod struct {
	ns, name, uid, node string
	terminating         bool
}

// world is the fake cluster: what the apiserver holds, and the clock.
type world struct {
	now      time.Time
	cp       string // the oldest version any control-plane member runs
	plane    controlPlane
	mds      []*md
	machines []*machine
	nodes    []*node
	pods     []*pod
	seq      int // for unique names and UIDs
}

func (w *world) next() int { w.seq++; return w.seq }

func (w *world) md(name string) *md {
	for _, d := range w.mds {
		if d.name == name {
			return d
		}
	}
	return nil
}

func (w *world) machine(name string) *machine {
	for _, m := range w.machines {
		if m.name == name {
			return m
		}
	}
	return nil
}

func (w *world) node(name string) *node {
	for _, n := range w.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

func (w *world) addMachine(m *machine) {
	w.machines = append(w.machines, m)
	slices.SortFunc(w.machines, func(a, b *machine) int { return cmp.Compare(a.name, b.name) })
}

// removeMachine drops a Machine whose teardown finished, with its Node and
// the pods bound to it.
func (w *world) removeMachine(m *machine) {
	w.machines = slices.DeleteFunc(w.machines, func(x *machine) bool { return x == m })
	if m.node == "" {
		w.removeMarked(m)
		return
	}
	w.nodes = slices.DeleteFunc(w.nodes, func(n *node) bool { return n.name == m.node })
	w.pods = slices.DeleteFunc(w.pods, func(p *pod) bool { return p.node == m.node })
}

// poolOf resolves a Machine to its MachineDeployment as machine-controller's
// ownership chain does (Machine → MachineSet → MachineDeployment): the first
// MD by name whose selector matches its labels, else the MD named after an
// owning MachineSet minus its last "-segment". "" when unowned.
func (w *world) poolOf(m *machine) string {
	for _, d := range w.mds { // kept sorted by name
		if len(d.selector) > 0 && matches(d.selector, m.labels) {
			return d.name
		}
	}
	for _, ms := range m.machineSets {
		if i := strings.LastIndex(ms, "-"); i > 0 && w.md(ms[:i]) != nil {
			return ms[:i]
		}
	}
	return ""
}

// takesDown is how many of d's Machines machine-controller v1.65.0 may
// delete as soon as d's template changes, before any replacement is ready:
// maxUnavailable (default 0) of spec.replicas, a percentage rounded down;
// one when it and maxSurge (default 1, a percentage rounded up) are both
// 0; at most spec.replicas; then every live Machine d owns past
// spec.replicas, since the old MachineSets go down to spec.replicas minus
// maxUnavailable; never more than the live Machines d owns. What does not
// resolve (no replica count, an unknown type, a bound that does not parse)
// is every live Machine d owns.
func (w *world) takesDown(d *md) int {
	owned := w.ownedLive(d)
	st := d.strategy
	if d.replicas == nil || st.unreadable || (st.kind != "" && st.kind != "RollingUpdate") {
		return owned
	}
	replicas := int(*d.replicas)
	if replicas == 0 {
		return owned // all of them are past spec.replicas
	}
	surge, okS := resolveBound(st.maxSurge, 1, replicas, true)
	down, okU := resolveBound(st.maxUnavailable, 0, replicas, false)
	if !okS || !okU {
		return owned
	}
	if surge == 0 && down == 0 {
		down = 1
	}
	return min(min(down, replicas)+max(owned-replicas, 0), owned)
}

// ownedLive counts d's Machines that are not deleting.
func (w *world) ownedLive(d *md) int {
	n := 0
	for _, m := range w.machines {
		if !m.deleting && w.owner(m) == d.name {
			n++
		}
	}
	return n
}

// resolveBound is a strategy bound: def when absent, a count as given, a
// percentage of replicas rounded up or down.
func resolveBound(v any, def, replicas int, up bool) (int, bool) {
	switch v := v.(type) {
	case nil:
		return def, true
	case int:
		return v, v >= 0
	case string:
		var pct int
		if _, err := fmt.Sscanf(v, "%d%%", &pct); err != nil || pct < 0 {
			return 0, false
		}
		if up {
			return (pct*replicas + 99) / 100, true
		}
		return pct * replicas / 100, true
	}
	return 0, false
}

// owner is the pool whose MachineSet really owns the Machine, by its owner
// reference; poolOf's answer when it has none. It differs from poolOf only
// where selectors overlap, and it is what machine-controller acts on.
func (w *world) owner(m *machine) string {
	for _, ms := range m.machineSets {
		if i := strings.LastIndex(ms, "-"); i > 0 && w.md(ms[:i]) != nil {
			return ms[:i]
		}
	}
	return w.poolOf(m)
}

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// hasControlPlaneKey says one of the two control-plane label keys is
// present, whatever its value.
func hasControlPlaneKey(labels map[string]string) bool {
	_, a := labels[labelControlPlane]
	_, b := labels[labelMaster]
	return a || b
}

// mdIsControlPlane is the control-plane MD heuristic, written again.
func mdIsControlPlane(d *md) bool {
	for _, l := range []map[string]string{d.labels, d.tpl, d.tplMeta, d.tplSpec} {
		if hasControlPlaneKey(l) {
			return true
		}
	}
	name := strings.ToLower(d.name)
	if strings.Contains(name, "control-plane") || strings.Contains(name, "controlplane") || strings.Contains(name, "master") {
		return true
	}
	for _, seg := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		if seg == "cp" {
			return true
		}
	}
	return false
}

// mdIsAutoscaler is the autoscaler-ownership check, written again.
func mdIsAutoscaler(d *md) bool {
	for _, g := range []string{"cluster.k8s.io", "cluster.x-k8s.io"} {
		for _, b := range []string{"min", "max"} {
			if _, ok := d.annots[g+"/cluster-api-autoscaler-node-group-"+b+"-size"]; ok {
				return true
			}
		}
	}
	return false
}

// machineIsControlPlane says the Machine is control plane by its own labels,
// by its node's, or by its pool's.
func (w *world) machineIsControlPlane(m *machine) bool {
	if hasControlPlaneKey(m.labels) || m.specCP {
		return true
	}
	if n := w.node(m.node); n != nil && hasControlPlaneKey(n.labels) {
		return true
	}
	d := w.md(w.poolOf(m))
	return d != nil && mdIsControlPlane(d)
}

// dump is a compact text of the world, for a failure message.
func (w *world) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "now=%s cp=%q\n", w.now.Format(time.RFC3339), w.cp)
	b.WriteString(w.plane.dump())
	for _, d := range w.mds {
		reps := "nil"
		if d.replicas != nil {
			reps = fmt.Sprint(*d.replicas)
		}
		fmt.Fprintf(&b, "  md %s rv=%d replicas=%s kubelet=%q sel=%v cp=%v autoscaler=%v labels=%v tpl=%v/%v/%v\n",
			d.name, d.rv, reps, d.kubelet, d.selector, mdIsControlPlane(d), mdIsAutoscaler(d),
			d.labels, d.tpl, d.tplMeta, d.tplSpec)
	}
	for _, m := range w.machines {
		fmt.Fprintf(&b, "  machine %s pool=%q owner=%q rv=%d age=%s deleting=%v(%s ago) node=%q kubelet=%q cp=%v joinless=%v\n",
			m.name, w.poolOf(m), w.owner(m), m.rv, age(w.now, m.created), m.deleting, age(w.now, m.deletedAt), m.node, m.kubelet,
			hasControlPlaneKey(m.labels) || m.specCP, m.joinless)
	}
	for _, n := range w.nodes {
		fmt.Fprintf(&b, "  node %s ready=%q for %s cp=%v marks=%q/%q\n", n.name, n.ready, age(w.now, n.since), hasControlPlaneKey(n.labels),
			n.ownerUID, n.ownerMachine)
	}
	for _, p := range w.pods {
		if p.terminating {
			fmt.Fprintf(&b, "  pod %s/%s on %s terminating\n", p.ns, p.name, p.node)
		}
	}
	return b.String()
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String()
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}
