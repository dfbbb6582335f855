package safety_test

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/actor/internal/desired"
)

// evictionTimeout is KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS in every scenario.
const evictionTimeout = 300 * time.Second

// maxReplicas is KUBEHZ_MAX_REPLICAS in every scenario.
const maxReplicas = 50

// checker holds the invariants. It sees each write before the apiserver
// applies it, so it judges the write against the world the actor acted on.
type checker struct {
	w        *world
	seed     int64
	scenario int
	doc      desired.Document
	limits   limits // the scenario's KUBEHZ_HEAL_* local limits
	step     int
	violated string // the first violation, with the world as it stood then

	// This step's reference, computed from the world before the pass.
	ref    reference
	healed int // heal deletes this step that set a Machine deleting
	// removed is, by pool, what the scale-downs and rolls applied this step
	// take down.
	removed map[string]int

	// This leadership term.
	termStart time.Time
	deleted   map[string]deletion  // Machines this term set deleting, by name
	lastHeal  map[string]time.Time // pool → last landed heal of this term
	unwedged  map[string]int       // machine → the step its pods were force-deleted

	// This scenario: pools whose kubelet the actor changed.
	rolled map[string]bool

	totals *totals
}

type deletion struct {
	node string
	at   time.Time
}

func newChecker(w *world, t *totals) *checker {
	return &checker{w: w, totals: t, rolled: map[string]bool{}}
}

// newTerm forgets what the previous term's executor did: a new leader has
// its own memory, and its own once-per-machine unwedge.
func (c *checker) newTerm() {
	c.termStart = c.w.now
	c.deleted = map[string]deletion{}
	c.lastHeal = map[string]time.Time{}
	c.unwedged = map[string]int{}
}

func (c *checker) beginStep(doc desired.Document, step int) {
	c.doc, c.step, c.healed, c.removed = doc, step, 0, map[string]int{}
	c.ref = reference{}
	if armed(doc) {
		c.ref = computeReference(c.w, effective(doc.Healing, c.limits))
		if len(c.ref.candidates) > 0 && !c.ref.storm && c.takingDown() > 0 {
			c.totals.pastCountBesideHeal++
		}
	}
	c.countVersionStimuli()
}

func (c *checker) fail(invariant, format string, args ...any) {
	if c.violated != "" {
		return
	}
	c.violated = fmt.Sprintf("invariant %s: %s\ndocument: %s\nworld before the write:\n%s",
		invariant, fmt.Sprintf(format, args...), docDump(c.doc), c.w.dump())
}

// onWrite checks one write against the world before it applies.
func (c *checker) onWrite(wr *write) {
	if !wr.granted {
		c.fail("3 (leadership)", "%s reached the apiserver without a live fence grant", wr)
	}
	if wr.kind != "deletePod" && wr.ns != namespace {
		c.fail("4 (pools)", "%s is outside the MD namespace %q", wr, namespace)
	}
	switch wr.kind {
	case "patch":
		c.checkPatch(wr)
		if d := c.w.md(wr.name); d != nil && wr.replicas != nil {
			switch {
			case d.replicas != nil && *wr.replicas < *d.replicas:
				wr.shrinks = *d.replicas - *wr.replicas
			case d.replicas == nil:
				// machine-controller kept the pool at its live Machines
				// (reconcile); from the patch on it scales them down to it.
				wr.shrinks, wr.unread = max(int64(c.w.ownedLive(d))-*wr.replicas, 0), true
			}
		}
		if d := c.w.md(wr.name); d != nil && wr.kubelet != nil && *wr.kubelet != d.kubelet {
			wr.takes = c.w.takesDown(d)
		}
	case "deleteMachine":
		c.checkMachineDelete(wr)
	case "deletePod":
		c.checkPodDelete(wr)
	}
}

// answered learns what a write did once the apiserver answered it.
func (c *checker) answered(wr write) {
	switch wr.kind {
	case "patch":
		c.totals.patches++
		takes := int(wr.shrinks) + wr.takes
		if wr.applied && wr.err != nil && takes > 0 && len(c.ref.candidates) > 0 && !c.ref.storm {
			c.totals.lostBesideHeal++
		}
		// What landed counts, answered or not: the actor cannot tell a
		// lost answer from a refusal it never got.
		if wr.applied && wr.shrinks > 0 {
			// machine-controller marks what it removes only on a later step.
			c.removed[wr.name] += int(wr.shrinks)
			if len(c.ref.candidates) > 0 && !c.ref.storm {
				c.totals.scaleDownsBesideHeal++
				if wr.unread {
					c.totals.unreadBesideHeal++
				}
			}
		}
		if wr.kubelet != nil {
			c.totals.kubeletPatches++
			if wr.applied {
				c.rolled[wr.name] = true
				// Likewise the first Machines of the roll it starts.
				c.removed[wr.name] += wr.takes
				if wr.takes > 0 && len(c.ref.candidates) > 0 && !c.ref.storm {
					c.totals.rollsBesideHeal++
				}
			}
		}
	case "deleteMachine":
		m := c.w.machine(wr.name)
		switch {
		case wr.err == nil && m != nil:
			c.totals.healDeletes++
			c.healed++
			c.deleted[wr.name] = deletion{node: c.w.followedNode(m), at: c.w.now}
			c.lastHeal[c.w.poolOf(m)] = c.w.now
		case apierrors.IsNotFound(wr.err) && m != nil:
			c.lastHeal[c.w.poolOf(m)] = c.w.now // the actor counts it as healed
		case wr.applied && m != nil:
			// Landed, its answer lost: the Machine is deleting and the
			// pool's cooldown runs, though the actor cannot know it landed.
			c.totals.lostHeals++
			c.healed++
			c.lastHeal[c.w.poolOf(m)] = c.w.now
		}
	case "deletePod":
		c.totals.podDeletes++
	}
}

func (c *checker) docPool(name string) bool {
	for _, p := range c.doc.WorkerPools {
		if p.Name == name {
			return true
		}
	}
	return false
}

// named counts the document's pools called name.
func (c *checker) named(name string) int {
	n := 0
	for _, p := range c.doc.WorkerPools {
		if p.Name == name {
			n++
		}
	}
	return n
}

func (c *checker) checkPatch(wr *write) {
	if wr.badBody != nil {
		c.fail("3 (flags)", "%s: unexpected patch body: %v", wr, wr.badBody)
		return
	}
	d := c.w.md(wr.name)
	if d != nil && mdIsControlPlane(d) {
		c.fail("1 (control plane)", "%s patches a control-plane MachineDeployment", wr)
	}
	if d != nil && mdIsAutoscaler(d) {
		c.fail("1 (autoscaler)", "%s patches a MachineDeployment cluster-autoscaler owns", wr)
	}
	if !c.docPool(wr.name) {
		c.fail("4 (pools)", "%s patches a MachineDeployment the document does not name", wr)
	}
	if wr.replicas != nil {
		c.checkReplicas(wr)
	}
	if wr.kubelet != nil {
		c.checkKubelet(wr, d)
	}
}

func (c *checker) checkReplicas(wr *write) {
	if !c.doc.Execution.Scaling {
		c.fail("3 (flags)", "%s: a replicas patch with scaling off", wr)
	}
	n := *wr.replicas
	var want *int64
	for _, p := range c.doc.WorkerPools {
		if p.Name == wr.name {
			want = p.DesiredReplicas
		}
	}
	if c.named(wr.name) != 1 || want == nil || *want != n || n < 0 || n > maxReplicas {
		c.fail("4 (pools)", "%s: not the one desired count within 0..%d", wr, maxReplicas)
	}
}

func (c *checker) checkKubelet(wr *write, d *md) {
	if !c.doc.Execution.Upgrades {
		c.fail("3 (flags)", "%s: a kubelet patch with upgrades off", wr)
	}
	if c.doc.KubernetesVersion == nil || strings.TrimSpace(*c.doc.KubernetesVersion) != *wr.kubelet {
		c.fail("5 (versions)", "%s: not the document's kubernetesVersion", wr)
	}
	target, okT := parseVersion(*wr.kubelet)
	cp, okC := parseVersion(c.w.cp)
	switch {
	case !okT:
		c.fail("5 (versions)", "%s: the target is not a version", wr)
	case !okC:
		c.fail("5 (versions)", "%s: sent while the control plane's version %q does not parse", wr, c.w.cp)
	case target.major != cp.major || target.minor > cp.minor || target.minor < cp.minor-3:
		c.fail("5 (versions)", "%s: outside the skew policy of control plane %s", wr, c.w.cp)
	}
	c.checkStableControlPlane(wr)
	c.checkRollVersions(wr, d)
	for _, q := range c.w.mds {
		if q.name == wr.name || !c.midRoll(q) {
			continue
		}
		c.fail("6 (one roll)", "%s sent while pool %s is mid-roll to %q", wr, q.name, q.kubelet)
	}
}

// midRoll says machine-controller is still replacing pool d's machines:
// one its MachineSet owns, not deleting, runs another kubelet than d's. Control-plane
// and autoscaler pools are not the actor's to roll and never count.
func (c *checker) midRoll(d *md) bool {
	if d.kubelet == "" || mdIsControlPlane(d) || mdIsAutoscaler(d) {
		return false
	}
	for _, m := range c.w.machines {
		if !m.deleting && c.w.owner(m) == d.name && !sameVersion(m.kubelet, d.kubelet) {
			return true
		}
	}
	return false
}

// endStep checks what holds once the pass is over.
func (c *checker) endStep() {
	rolling := []string{}
	for _, d := range c.w.mds {
		if c.rolled[d.name] && c.midRoll(d) {
			rolling = append(rolling, d.name)
		}
	}
	// Rolls start only by a kubelet patch, so two at once mean a patch was
	// sent during another roll.
	if len(rolling) > 1 {
		c.fail("6 (one roll)", "pools %v the actor rolled are mid-roll at once", rolling)
	}
}

// totals count what acted across all scenarios: a control that the stimuli
// reach every path the invariants guard.
type totals struct {
	patches, kubeletPatches, healDeletes, podDeletes, unwedges int
	stormRefusals, fenceRefusals, steps                        int
	lagged                                                     int // steps where some cache's List served a stale world
	versions                                                   versionTotals
	cpMixed                                                    int // reads of a control plane whose members disagree
	unlinkedHeld                                               int // steps that held back a Machine whose Node joined unlinked
	limited                                                    int // steps whose document the local limits tightened
	scaleDownsBesideHeal                                       int // scale-downs applied while healing had a candidate
	unreadBesideHeal                                           int // of those, from a replica count that could not be read
	rollsBesideHeal                                            int // rolls that take Machines down, applied while healing had a candidate
	lostBesideHeal                                             int // scale-downs and rolls applied, their answer lost, while healing had a candidate
	lostHeals                                                  int // heal deletes applied, their answer lost
	pastCountBesideHeal                                        int // steps that began with Machines past a pool's count while healing had a candidate
}

func (t totals) String() string {
	return fmt.Sprintf("steps %d (a cache lagged in %d); MD patches %d (kubelet %d; %d scale-downs (%d from an unread count) and %d rolls taking Machines down beside a heal candidate; %d of them with the answer lost); heal deletes %d (%d more with the answer lost); unwedges %d (pods force-deleted %d); storm refusals %d; fence refusals %d; unlinked held %d; limited %d; reads of a control plane mid-upgrade %d; steps with Machines past a pool's count beside a heal candidate %d; %s",
		t.steps, t.lagged, t.patches, t.kubeletPatches, t.scaleDownsBesideHeal, t.unreadBesideHeal, t.rollsBesideHeal, t.lostBesideHeal, t.healDeletes, t.lostHeals, t.unwedges, t.podDeletes, t.stormRefusals, t.fenceRefusals,
		t.unlinkedHeld, t.limited, t.cpMixed, t.pastCountBesideHeal, t.versions)
}
