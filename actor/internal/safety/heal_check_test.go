package safety_test

import "slices"

// reference is what healing may do this step, worked out from the world by
// the healing rules' definitions (README, The actor), without heal.Decide.
type reference struct {
	policy     policy          // the document's, within the local limits
	candidates map[string]bool // unhealthy, not deleting, not control plane
	unbacked   int             // unhealthy worker nodes no Machine names
	// down counts the unhealthy workers as the storm brake does: every
	// worker Node not Ready, however briefly or whatever its Machine is
	// doing, and every candidate that never joined.
	down     int
	inFlight int // Machines deleting before the pass
	storm    bool
}

func computeReference(w *world, p policy) reference {
	unhealthyAfter, startup := p.unhealthyAfter, p.startup
	ref := reference{policy: p, candidates: map[string]bool{}}
	named := map[string]bool{}
	for _, m := range w.machines {
		if m.deleting {
			ref.inFlight++
		}
		if m.node != "" {
			named[m.node] = true
		}
		for _, n := range w.marked(m) { // unlinked: the Nodes bearing its marks
			if m.node == "" {
				named[n.name] = true
			}
		}
		cp := hasControlPlaneKey(m.labels) || m.specCP
		if !m.deleting && m.node == "" && !cp && !m.created.IsZero() {
			if age := w.now.Sub(m.created); age > 0 && age >= startup && w.unlinkedCandidate(m, unhealthyAfter) {
				ref.candidates[m.name] = true
			}
		}
	}
	for _, n := range w.nodes {
		if !w.unhealthyWorker(n, unhealthyAfter) {
			continue
		}
		if !named[n.name] {
			ref.unbacked++
			continue
		}
		for _, m := range w.machines { // by name: the first live one stands behind it
			if m.node == n.name && !m.deleting {
				if !hasControlPlaneKey(m.labels) && !m.specCP {
					ref.candidates[m.name] = true
				}
				break
			}
		}
	}
	cpNodes := map[string]bool{}
	for _, m := range w.machines {
		if hasControlPlaneKey(m.labels) || m.specCP {
			cpNodes[m.node] = true
			for _, n := range w.marked(m) {
				cpNodes[n.name] = true
			}
		}
	}
	notReady := map[string]bool{}
	for _, n := range w.nodes {
		if n.ready != "True" && n.ready != "" && !hasControlPlaneKey(n.labels) && !cpNodes[n.name] {
			notReady[n.name] = true
		}
	}
	ref.down = len(notReady)
	for name := range ref.candidates {
		m := w.machine(name)
		if !notReady[m.node] && !slices.ContainsFunc(w.marked(m), func(n *node) bool { return notReady[n.name] }) {
			ref.down++
		}
	}
	ref.storm = ref.down > p.maxUnhealthy && len(ref.candidates)+ref.unbacked > 0
	return ref
}

func (c *checker) checkMachineDelete(wr *write) {
	if !armed(c.doc) {
		c.fail("3 (flags)", "%s with healing not armed", wr)
		return
	}
	m := c.w.machine(wr.name)
	if m == nil {
		c.fail("2 (disruption)", "%s: no such Machine", wr)
		return
	}
	pool := c.w.poolOf(m)
	if c.w.machineIsControlPlane(m) {
		c.fail("1 (control plane)", "%s deletes a control-plane Machine", wr)
	}
	if d := c.w.md(pool); d == nil || mdIsAutoscaler(d) {
		c.fail("1 (ownership)", "%s deletes a Machine of pool %q, unowned or cluster-autoscaler's", wr, pool)
	}
	// Where selectors overlap, the pool a selector finds may not be the
	// MachineSet's: whichever owns it, no control-plane or autoscaler pool.
	if owner := c.w.md(c.w.owner(m)); owner != nil && (mdIsControlPlane(owner) || mdIsAutoscaler(owner)) {
		c.fail("1 (ownership)",
			"%s deletes a Machine resolved to pool %q but owned by %q", wr, pool, owner.name)
	}
	if !c.docPool(pool) {
		c.fail("4 (pools)", "%s deletes a Machine of pool %q, which the document does not name", wr, pool)
	}
	if wr.uid != m.uid {
		c.fail("2 (disruption)", "%s: UID precondition %q is not the Machine's %q", wr, wr.uid, m.uid)
	}
	c.checkNotJoined(wr, m)
	c.checkLocalLimits(wr, m, pool)
	limit := c.ref.policy.maxUnhealthy
	switch {
	case c.ref.storm:
		c.fail("2 (storm)", "%s during a storm: %d workers down (%d candidates, %d unbacked) > maxUnhealthy %d",
			wr, c.ref.down, len(c.ref.candidates), c.ref.unbacked, limit)
	case !c.ref.candidates[m.name]:
		c.fail("2 (disruption)", "%s deletes a Machine that is not unhealthy", wr)
	case c.ref.inFlight+c.takingDown()+c.healed >= limit:
		c.fail("2 (disruption)", "%s with %d deleting before the pass, %d yet to be taken down and %d deleted in it: maxUnhealthy %d",
			wr, c.ref.inFlight, c.takingDown(), c.healed, limit)
	}
	last := c.termStart
	if t, ok := c.lastHeal[pool]; ok && t.After(last) {
		last = t
	}
	if cooldown := c.ref.policy.cooldown; c.w.now.Sub(last) < cooldown {
		c.fail("2 (cooldown)", "%s only %s after pool %q's last heal or the term's start (cooldown %s)",
			wr, c.w.now.Sub(last), pool, cooldown)
	}
}

func (c *checker) checkPodDelete(wr *write) {
	if !armed(c.doc) {
		c.fail("3 (flags)", "%s with healing not armed", wr)
	}
	var p *pod
	for _, q := range c.w.pods {
		if q.ns == wr.ns && q.name == wr.name {
			p = q
		}
	}
	if p == nil {
		c.fail("7 (unwedge)", "%s: no such pod", wr)
		return
	}
	n := c.w.node(p.node)
	if n != nil && hasControlPlaneKey(n.labels) {
		c.fail("1 (control plane)", "%s deletes a pod on control-plane node %s", wr, p.node)
	}
	switch {
	case !p.terminating:
		c.fail("7 (unwedge)", "%s: the pod is not Terminating", wr)
	case wr.uid != p.uid:
		c.fail("7 (unwedge)", "%s: UID precondition %q is not the pod's %q", wr, wr.uid, p.uid)
	case n == nil || n.ready == "True":
		c.fail("7 (unwedge)", "%s: node %s is gone or Ready", wr, p.node)
	}
	machine := ""
	for name, d := range c.deleted {
		if d.node != "" && d.node == p.node {
			machine = name
			if c.w.now.Sub(d.at) < evictionTimeout {
				c.fail("7 (unwedge)", "%s only %s after this term deleted Machine %s", wr, c.w.now.Sub(d.at), name)
			}
		}
	}
	if machine == "" {
		c.fail("7 (unwedge)", "%s: node %s is not the node of a Machine this term deleted", wr, p.node)
		return
	}
	if s, ok := c.unwedged[machine]; ok && s != c.step {
		c.fail("7 (unwedge)", "%s: Machine %s was already unwedged at step %d", wr, machine, s)
	}
	if _, ok := c.unwedged[machine]; !ok {
		c.totals.unwedges++
		c.unwedged[machine] = c.step
	}
}

// takingDown counts the Machines machine-controller is yet to mark
// deleting (docs/contract.md#heal-decisions): in each pool, the live
// Machines it owns past spec.replicas, or what this step's scale-downs and
// rolls of it take down, whichever is more. Either way no read shows them
// deleting yet: a scale-down of an earlier step the controller lags behind
// leaves the first, and a patch of this step is not applied before the
// controller's next step.
func (c *checker) takingDown() int {
	n := 0
	for _, d := range c.w.mds {
		n += max(c.past(d), c.removed[d.name])
	}
	return n
}

// past counts d's live Machines past its spec.replicas.
func (c *checker) past(d *md) int {
	if d.replicas == nil {
		return 0
	}
	return max(c.w.ownedLive(d)-max(int(*d.replicas), 0), 0)
}
