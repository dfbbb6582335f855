package safety_test

import (
	"math/rand/v2"
	"slices"
)

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
