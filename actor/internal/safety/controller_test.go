package safety_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// advance moves the clock by dt and lets the rest of the cluster move:
// machine-controller tears deleting Machines down (unless pods stuck on a
// dead node wedge them), replaces them, scales and rolls MachineDeployments
// one machine at a time; kubelets join and nodes change readiness; people
// delete Machines by hand.
func advance(r *rand.Rand, w *world, dt time.Duration) {
	w.now = w.now.Add(dt)
	advanceControlPlane(r, w)
	teardown(r, w)
	for _, d := range w.mds {
		reconcile(r, w, d)
	}
	for _, m := range w.machines {
		if m.node == "" && !m.deleting && !m.joinless && !m.created.IsZero() && chance(r, 0.6) {
			join(r, w, m)
		}
	}
	for _, n := range w.nodes {
		if chance(r, 0.12) {
			flip(r, w, n, dt)
		}
	}
	for _, n := range w.nodes {
		if chance(r, 0.15) {
			w.pods = append(w.pods, &pod{ns: "app", name: fmt.Sprintf("p-%d", w.next()),
				uid: fmt.Sprintf("pod-uid-%d", w.next()), node: n.name})
		}
	}
	if len(w.machines) > 0 && chance(r, 0.03) {
		if m := pick(r, w.machines); !m.deleting {
			m.deleting, m.deletedAt = true, w.now // by hand, not by the actor
			m.rv++
		}
	}
}

// teardown drains deleting Machines and removes those whose drain is done.
// A pod on a node that is not Ready cannot confirm its eviction, so it stays
// Terminating and keeps its Machine (the wedge the unwedge clears).
func teardown(r *rand.Rand, w *world) {
	var gone []*machine
	for _, m := range w.machines {
		if !m.deleting {
			continue
		}
		n := w.node(m.node)
		if n != nil && n.ready == "True" {
			// A live kubelet confirms evictions: the pods leave.
			w.pods = slices.DeleteFunc(w.pods, func(p *pod) bool { return p.node == n.name && p.terminating })
		}
		wedged := false
		for _, p := range w.pods {
			if p.node == m.node && m.node != "" {
				p.terminating = true
				wedged = true
			}
		}
		if !wedged && chance(r, 0.5) {
			gone = append(gone, m)
		}
	}
	for _, m := range gone {
		w.removeMachine(m)
	}
}

// reconcile is one MachineDeployment's MachineSet: it adds a Machine when
// short, deletes one when over, and rolls one stale Machine at a time while
// nothing else of the pool is coming or going.
func reconcile(r *rand.Rand, w *world, d *md) {
	var live []*machine
	busy := false
	for _, m := range w.machines {
		if w.owner(m) != d.name {
			continue
		}
		if m.deleting {
			busy = true
			continue
		}
		if m.node == "" && !m.joinless {
			busy = true
		}
		live = append(live, m)
	}
	want := int64(len(live))
	if d.replicas != nil {
		want = *d.replicas
	}
	switch {
	case int64(len(live)) < want:
		m := w.newMachineFor(d)
		m.joinless = chance(r, 0.1)
		w.addMachine(m)
	case int64(len(live)) > want:
		m := live[len(live)-1]
		m.deleting, m.deletedAt = true, w.now
		m.rv++
	case !busy && d.kubelet != "":
		for _, m := range live {
			if !sameVersion(m.kubelet, d.kubelet) {
				m.deleting, m.deletedAt = true, w.now
				m.rv++
				n := w.newMachineFor(d)
				n.joinless = chance(r, 0.05)
				w.addMachine(n)
				break
			}
		}
	}
}

// flip changes a node's readiness, at some moment within the last dt.
func flip(r *rand.Rand, w *world, n *node, dt time.Duration) {
	if n.ready == "True" {
		n.ready = pick(r, []string{"False", "Unknown"})
	} else {
		n.ready = "True"
	}
	n.since = w.now.Add(-time.Duration(r.Int64N(int64(dt) + 1)))
}
