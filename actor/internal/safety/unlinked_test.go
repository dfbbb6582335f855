package safety_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"kubehz.dev/agent/shared/wire"
)

// machine-controller marks a Node it matched to a Machine (the Machine's
// UID as a label, its namespace/name as an annotation; on Hetzner the Node
// also carries the Machine's name), and writes the Machine's
// status.nodeRef later, sometimes a pass or more later. The world models
// that lag: a Machine with no nodeRef may have a Node that joined.

// bearsMarks says n names m by one of machine-controller's marks.
func bearsMarks(n *node, m *machine) bool {
	return n.name == m.name || (m.uid != "" && n.ownerUID == m.uid) || n.ownerMachine == namespace+"/"+m.name
}

// marked returns, by name, the Nodes bearing m's marks that no Machine's
// nodeRef names: a linked Node is its Machine's alone, whatever stale mark
// it bears.
func (w *world) marked(m *machine) []*node {
	var out []*node
	for _, n := range w.nodes {
		if bearsMarks(n, m) && !slices.ContainsFunc(w.machines, func(x *machine) bool { return x.node == n.name }) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *node) int { return cmp.Compare(a.name, b.name) })
	return out
}

// mark puts one or more of m's marks on n at random, and now and then,
// beside a mark by name or annotation, a stale owner label naming another
// Machine (an address reused by a new server). A mark by name renames the
// node and moves its pods with it.
func mark(r *rand.Rand, w *world, n *node, m *machine) {
	n.server = m.name
	kind := r.IntN(4)
	switch kind {
	case 0:
		for _, p := range w.pods {
			if p.node == n.name {
				p.node = m.name
			}
		}
		n.name = m.name
	case 1:
		n.ownerUID = m.uid
	case 2:
		n.ownerMachine = namespace + "/" + m.name
	default:
		n.ownerUID, n.ownerMachine = m.uid, namespace+"/"+m.name
	}
	if (kind == 0 || kind == 2) && chance(r, 0.1) {
		n.ownerUID = pick(r, w.machines).uid
	}
}

// unlinkSome turns some joined Machines of a new world into ones whose
// nodeRef machine-controller has not written yet.
func unlinkSome(r *rand.Rand, w *world) {
	for _, m := range w.machines {
		if m.node == "" || !chance(r, 0.12) {
			continue
		}
		n := w.node(m.node)
		m.node = ""
		if n != nil {
			mark(r, w, n, m)
		}
	}
}

// join is machine-controller seeing m's kubelet: the Node of m's server,
// if it joined already, gets linked; otherwise a Node joins, marked, and is
// linked at once or left for a later pass.
func join(r *rand.Rand, w *world, m *machine) {
	if i := slices.IndexFunc(w.nodes, func(n *node) bool { return n.server == m.name }); i >= 0 {
		m.node = w.nodes[i].name
		m.rv++
		return
	}
	n := w.joinNode(fmt.Sprintf("n-%s", m.name), nil)
	mark(r, w, n, m)
	if chance(r, 0.7) {
		m.node = n.name
		m.rv++
	}
}

// removeMarked drops, with its pods, the Node of an unlinked Machine whose
// teardown finished.
func (w *world) removeMarked(m *machine) {
	for _, n := range slices.Clone(w.nodes) {
		if n.server != m.name || slices.ContainsFunc(w.machines, func(x *machine) bool { return x.node == n.name }) {
			continue
		}
		w.nodes = slices.DeleteFunc(w.nodes, func(x *node) bool { return x == n })
		w.pods = slices.DeleteFunc(w.pods, func(p *pod) bool { return p.node == n.name })
	}
}

// unhealthyWorker is the unhealthy-node test of healing: a worker whose Ready
// condition has not been True for at least unhealthyAfter.
func (w *world) unhealthyWorker(n *node, unhealthyAfter time.Duration) bool {
	return n.ready != "True" && n.ready != "" && !n.since.IsZero() && !hasControlPlaneKey(n.labels) &&
		w.now.Sub(n.since) >= unhealthyAfter
}

// unlinkedCandidate says a Machine with no nodeRef, past its startup
// window, may be healed: no Node bears its marks (it never joined), or
// every one that does is an unhealthy worker.
func (w *world) unlinkedCandidate(m *machine, unhealthyAfter time.Duration) bool {
	for _, n := range w.marked(m) {
		if !w.unhealthyWorker(n, unhealthyAfter) {
			return false
		}
	}
	return true
}

// followedNode is the node a heal of m leaves behind for the unwedge: its
// nodeRef's, else the first Node bearing its marks.
func (w *world) followedNode(m *machine) string {
	if m.node != "" {
		return m.node
	}
	if own := w.marked(m); len(own) > 0 {
		return own[0].name
	}
	return ""
}

// checkNotJoined fails a delete of a Machine with no nodeRef whose Node
// joined and is Ready: a working server behind a machine-controller that
// has not linked it yet, not a machine that never joined.
func (c *checker) checkNotJoined(wr *write, m *machine) {
	if m.node != "" {
		return
	}
	for _, n := range c.w.marked(m) {
		if n.ready == "True" {
			c.fail("2 (joined)", "%s deletes a Machine with no nodeRef whose node %s, bearing its marks, is Ready", wr, n.name)
		}
	}
}

// countHeld is a control, not an invariant: it counts the steps whose
// reports held back a Machine whose Node joined before its nodeRef, and
// those that held a document to the local limits, so the run shows the
// stimuli reached both paths.
func (c *checker) countHeld(reports []wire.Action) {
	unlinked, limited := false, false
	for _, a := range reports {
		if a.Type != wire.ActionHeal {
			continue
		}
		unlinked = unlinked || a.Status == wire.StatusPending && strings.Contains(a.Detail, "no status.nodeRef")
		limited = limited || a.Target == "healing policy" && strings.Contains(a.Detail, "local limits")
	}
	if unlinked {
		c.totals.unlinkedHeld++
	}
	if limited {
		c.totals.limited++
	}
}
