package safety_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/shared/wire"
)

// scenarios is how many random scenarios one run drives.
const scenarios = 10000

// TestSafety_TenThousandRandomScenarios drives the real executor through
// random clusters, documents, leadership changes, API failures and caches
// whose Lists lag the world, and checks after every write and every step
// that it never did what it must not. KUBEHZ_SAFETY_SEED=<seed> repeats a
// run; adding KUBEHZ_SAFETY_SCENARIO=<i> repeats one scenario of it.
func TestSafety_TenThousandRandomScenarios(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("KUBEHZ_SAFETY_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("KUBEHZ_SAFETY_SEED=%q: %v", s, err)
		}
	}
	first, count := 0, scenarios
	if s := os.Getenv("KUBEHZ_SAFETY_SCENARIO"); s != "" {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 {
			t.Fatalf("KUBEHZ_SAFETY_SCENARIO=%q: want a scenario index", s)
		}
		first, count = i, 1
	}
	t.Logf("seed %d, %d scenario(s) from index %d; reproduce one with KUBEHZ_SAFETY_SEED=%d KUBEHZ_SAFETY_SCENARIO=<index>",
		seed, count, first, seed)
	var tot totals
	for i := first; i < first+count; i++ {
		res := runScenario(t.Context(), seed, i, &tot, false)
		if res.violated != "" {
			t.Fatalf("seed %d scenario %d step %d (KUBEHZ_SAFETY_SEED=%d KUBEHZ_SAFETY_SCENARIO=%d): %s",
				seed, i, res.step, seed, i, res.violated)
		}
	}
	t.Logf("totals over %d scenario(s): %s", count, tot)
	if count < scenarios {
		return
	}
	// A control: the invariants prove nothing unless the stimuli make the
	// actor act, refuse and lose its lease, and its caches lag.
	for name, n := range map[string]int{
		"MD patches": tot.patches, "kubelet patches": tot.kubeletPatches, "heal deletes": tot.healDeletes,
		"unwedges": tot.unwedges, "storm refusals": tot.stormRefusals, "fence refusals": tot.fenceRefusals,
		"lagged steps": tot.lagged, "refused targets offered": tot.versions.badTargets,
		"live downgrades offered": tot.versions.liveDowngrades, "pre-release rolls": tot.versions.preReleaseRolls,
		"reads of a control plane mid-upgrade": tot.cpMixed,
		"unlinked machines held back":          tot.unlinkedHeld, "documents held to the local limits": tot.limited,
		"scale-downs beside a heal candidate":                              tot.scaleDownsBesideHeal,
		"rolls taking Machines down beside a heal candidate":               tot.rollsBesideHeal,
		"scale-downs and rolls beside a heal candidate, their answer lost": tot.lostBesideHeal,
		"heal deletes with their answer lost":                              tot.lostHeals,
		"Machines past a pool's count beside a heal candidate":             tot.pastCountBesideHeal,
	} {
		if n == 0 {
			t.Errorf("no %s in %d scenarios: the stimuli no longer reach that path", name, count)
		}
	}
}

// TestSafety_ScenarioReproducesFromItsSeed pins what the printed seed
// promises: the same seed and index replay the same writes.
func TestSafety_ScenarioReproducesFromItsSeed(t *testing.T) {
	for i := range 20 {
		var t1, t2 totals
		a := runScenario(t.Context(), 42, i, &t1, true)
		b := runScenario(t.Context(), 42, i, &t2, true)
		if !slices.Equal(a.trace, b.trace) || t1.String() != t2.String() {
			t.Fatalf("scenario %d differs between two runs:\n%s\n---\n%s",
				i, strings.Join(a.trace, "\n"), strings.Join(b.trace, "\n"))
		}
	}
}

type result struct {
	step     int
	violated string
	trace    []string
}

// runScenario drives one scenario to its end or its first violation.
func runScenario(ctx context.Context, seed int64, index int, tot *totals, trace bool) result {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	w := newWorld(r)
	var f faults
	if chance(r, 0.6) {
		f = faults{ensure: 0.04, get: 0.05, pods: 0.1, write: 0.12, version: 0.05, publish: 0.03, lost: 0.1}
	}
	fe := &fence{leading: true, refuseAfter: -1, live: map[int]bool{}}
	c := newChecker(w, tot)
	c.seed, c.scenario = seed, index
	c.limits = newLimits(r)
	api := &apiserver{w: w, r: r, f: f, fence: fe, check: c, cache: &informers{w: w}}
	if chance(r, 0.5) {
		api.slowest = requestTimeout
	}
	var res result
	if trace {
		api.trace = &res.trace
	}
	newTerm := func() *execute.Executor {
		c.newTerm()
		return &execute.Executor{
			Base: ctx, Fence: fe, Store: store.New(), MDs: mdCache{api}, Patcher: api, Events: api,
			Publisher: api, Namespace: namespace, MaxReplicas: maxReplicas, Log: slog.New(slog.DiscardHandler),
			Machines: machineCache{api}, Nodes: nodeCache{api}, Deleter: api, Pods: api, ControlPlane: api,
			HealMemory: heal.NewMemory(w.now), EvictionTimeout: evictionTimeout, Now: func() time.Time { return w.now },
			HealLimits: c.limits.forExecutor(),
		}
	}
	exec := newTerm()
	doc := newDocument(r, w, desired.Document{})
	steps := 5 + r.IntN(26)
	for step := range steps {
		if step > 0 {
			// Up to 20 minutes; often under 6, so the windows of 5 minutes
			// (eviction timeout, cooldowns) are crossed near their edges.
			dt := time.Duration(r.IntN(20*60+1)) * time.Second
			if chance(r, 0.35) {
				dt = time.Duration(r.IntN(6*60+1)) * time.Second
			}
			if chance(r, 0.15) { // polls seconds apart, across the control-plane gate's 10 s
				dt = time.Duration(r.IntN(16)) * time.Second
			}
			advance(r, w, dt)
			if chance(r, 0.3) {
				doc = newDocument(r, w, doc)
			}
		}
		switch {
		case !fe.leading:
			if chance(r, 0.5) { // leader again: a new term
				fe.leading, fe.refuseAfter = true, -1
				exec = newTerm()
			}
		case chance(r, 0.08):
			fe.leading = false // the lease is lost before the pass
		case chance(r, 0.05):
			fe.refuseAfter = r.IntN(3) // ... or during it
		case chance(r, 0.03):
			exec = newTerm() // a restart: a new term at once
		}
		runStep(ctx, c, api, exec, doc, step)
		if c.violated != "" {
			res.step, res.violated = step, c.violated
			return res
		}
	}
	tot.fenceRefusals += fe.refused
	return res
}

// runStep runs one pass and checks what must hold after it.
func runStep(ctx context.Context, c *checker, api *apiserver, exec *execute.Executor, doc desired.Document, step int) {
	c.beginStep(doc, step)
	api.cache.beginStep(api.r, step)
	c.totals.steps++
	reads := api.reads
	exec.Execute(ctx, doc)
	if api.cache.lagged {
		c.totals.lagged++
	}
	x := doc.Execution
	if !x.Scaling && !x.Upgrades && !armed(doc) && api.reads != reads {
		c.fail("3 (flags)", "every capability is off, yet the pass made %d read(s)", api.reads-reads)
	}
	if len(api.fence.live) != 0 {
		c.fail("3 (leadership)", "%d fence grant(s) outlive the pass", len(api.fence.live))
	}
	c.endStep()
	c.countHeld(exec.Store.Snapshot())
	if c.ref.storm && len(c.ref.candidates) > 0 && c.healed == 0 {
		for _, a := range exec.Store.Snapshot() {
			if a.Type == wire.ActionHeal && strings.Contains(a.Detail, "exceeds maxUnhealthy") {
				c.totals.stormRefusals++
				break
			}
		}
	}
}
