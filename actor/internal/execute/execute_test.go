package execute_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

func TestExecute_EveryFlagOffStopsAndClearsWithoutAnyAPICall(t *testing.T) {
	cases := []struct {
		name string
		doc  desired.Document
	}{
		{name: "all flags off", doc: desired.Document{Revision: 8, WorkerPools: []desired.Pool{pool("pool-a", 3)}}},
		{
			name: "healing authorized but the policy disabled",
			doc: desired.Document{Revision: 8, WorkerPools: []desired.Pool{pool("pool-a", 3)},
				Execution: desired.Execution{Healing: true}, Healing: desired.Healing{MaxUnhealthy: 1}},
		},
		{
			name: "healing policy enabled but not authorized",
			doc: desired.Document{Revision: 8, WorkerPools: []desired.Pool{pool("pool-a", 3)},
				Healing: desired.Healing{Enabled: true, MaxUnhealthy: 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, newCluster(md("pool-a", 2)))
			h.seed(7, wire.Action{Type: wire.ActionScale, Target: "pool-a", Status: wire.StatusDone, Detail: "replicas 1 to 2", Revision: 7})

			if retry := h.exec.Execute(t.Context(), tc.doc); retry {
				t.Error("retry = true, want false")
			}
			c := h.cluster
			if c.stops != 1 || c.ensures != 0 || c.lists != 0 || len(c.patches) != 0 {
				t.Errorf("stops %d, ensures %d, lists %d, patches %d; want 1, 0, 0, 0", c.stops, c.ensures, c.lists, len(c.patches))
			}
			if h.fence.Calls != 0 || len(h.events.events) != 0 {
				t.Errorf("fence calls %d, events %v; want none", h.fence.Calls, h.events.events)
			}
			if got := h.store.Snapshot(); got != nil || h.store.Revision() != 0 {
				t.Errorf("store holds %v at revision %d, want it cleared", got, h.store.Revision())
			}
			if want := []published{{0, nil}}; !reflect.DeepEqual(h.publisher.calls, want) {
				t.Errorf("published %+v, want %+v", h.publisher.calls, want)
			}
		})
	}
}

func TestExecute_EveryFlagOffTouchesNoFakeAndStopsEveryCache(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-time.Hour)))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1")}
	h.seed(7, wire.Action{Type: wire.ActionHeal, Target: "pool-a-m1", Status: wire.StatusPending, Detail: "cooldown", Revision: 7})
	v := "v1.35.6"
	doc := desired.Document{Revision: 7, KubernetesVersion: &v, WorkerPools: []desired.Pool{pool("pool-a", 2)},
		Healing: healPolicy(1, 0)}

	if retry := h.exec.Execute(t.Context(), doc); retry {
		t.Error("retry = true, want false")
	}
	for what, n := range h.world.calls() {
		if n != 0 {
			t.Errorf("%s called %d times, want 0", what, n)
		}
	}
	if h.cluster.ensures != 0 || h.cluster.lists != 0 || h.cluster.gets != 0 || len(h.patcher.patches) != 0 ||
		h.version.calls != 0 || h.fence.Calls != 0 {
		t.Errorf("MD ensures %d, lists %d, gets %d, patches %d, version reads %d, fence checks %d; want none",
			h.cluster.ensures, h.cluster.lists, h.cluster.gets, len(h.patcher.patches), h.version.calls, h.fence.Calls)
	}
	if h.cluster.stops != 1 || h.world.machineStops != 1 || h.world.nodeStops != 1 {
		t.Errorf("stops: MDs %d, Machines %d, Nodes %d; want each 1", h.cluster.stops, h.world.machineStops, h.world.nodeStops)
	}
	if h.store.Snapshot() != nil || h.store.Revision() != 0 {
		t.Errorf("store holds %+v at revision %d, want it cleared", h.store.Snapshot(), h.store.Revision())
	}
}

func TestExecute_NewRevisionReplacesThePreviousReports(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2), md("pool-b", 1)))
	h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3)))
	checkReports(t, "revision 7", h.store.Snapshot(), []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}})

	h.exec.Execute(t.Context(), scaling(8, pool("pool-b", 1)))
	want := []report{{"pool-b", wire.StatusDone, 8, "already at 1 replicas"}}
	checkReports(t, "revision 8", h.store.Snapshot(), want)
	last := h.publisher.last(t)
	if last.Revision != 8 {
		t.Errorf("published revision %d, want 8", last.Revision)
	}
	checkReports(t, "published", last.Actions, want)
}

// docs/contract.md#g-2: a capability switched off at the same revision loses
// its reports.
func TestExecute_ScalingSwitchedOffAtTheSameRevisionClearsScaleReports(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	if retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3))); retry {
		t.Fatal("the first pass asked for a retry")
	}
	checkReports(t, "scaling on", h.store.Snapshot(), []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}})

	doc := scaling(7, pool("pool-a", 4))
	doc.Execution = desired.Execution{Upgrades: true}
	if retry := h.exec.Execute(t.Context(), doc); retry {
		t.Error("retry = true, want false")
	}
	if got := h.store.Snapshot(); got != nil {
		t.Errorf("store holds %+v, want the scale reports gone", got)
	}
	if h.store.Revision() != 7 {
		t.Errorf("store revision %d, want 7 kept", h.store.Revision())
	}
	if len(h.cluster.patches) != 1 || h.cluster.stops != 1 {
		t.Errorf("patches %d, stops %d; want the first pass's 1 patch and the MD cache stopped", len(h.cluster.patches), h.cluster.stops)
	}
	if want := (published{7, nil}); !reflect.DeepEqual(h.publisher.last(t), want) {
		t.Errorf("published %+v, want %+v", h.publisher.last(t), want)
	}
}

// docs/contract.md#g-2: healing switched off at the same revision drops its
// reports at once and stops watching Nodes, while scaling goes on.
func TestExecute_HealingSwitchedOffAtTheSameRevisionClearsHealReportsAndStopsNodes(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-time.Hour)))
	doc := healing(7, healPolicy(0, 0))
	doc.Execution.Scaling = true
	doc.WorkerPools = []desired.Pool{pool("pool-a", 1)}

	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "healing on", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusFailed, 7, "maxUnhealthy 0"}})
	nodeEnsures, nodeStops := h.world.nodeEnsures, h.world.nodeStops

	doc.Execution.Healing = false
	if retry := h.exec.Execute(t.Context(), doc); retry {
		t.Error("retry = true, want false")
	}
	if got := ofType(wire.ActionHeal, h.store.Snapshot()); got != nil {
		t.Errorf("heal reports %+v survived healing being switched off", got)
	}
	checkTyped(t, "scale", wire.ActionScale, h.store.Snapshot(), []report{{"pool-a", wire.StatusDone, 7, "already at 1 replicas"}})
	if h.world.nodeStops != nodeStops+1 || h.world.nodeEnsures != nodeEnsures {
		t.Errorf("Node cache stops %d → %d, ensures %d → %d; want one more stop and no Ensure",
			nodeStops, h.world.nodeStops, nodeEnsures, h.world.nodeEnsures)
	}
	if ofType(wire.ActionHeal, h.publisher.last(t).Actions) != nil {
		t.Error("the published document still carries heal reports")
	}
}

// A report write that fails (an apiserver blip, two conflicts) must not be
// lost until the document changes, nor a ConfigMap someone emptied since:
// the pass's result is unchanged, and every Flush hands the reports to the
// publisher again, which writes only where the ConfigMap does not already
// hold them (store's TestPublish_… tests).
func TestExecute_FlushPublishesTheReportsOnEveryTick(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.exec.Flush(t.Context()) // the term's own empty report lands
	h.publisher.calls = nil
	h.publisher.err = fmt.Errorf("write ConfigMap kubehz-system/kubehz-actions: %w", errLostLease)
	if retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3))); retry {
		t.Error("retry = true, want false")
	}
	want := []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}}
	checkReports(t, "reports", h.store.Snapshot(), want)

	h.exec.Flush(t.Context()) // still failing
	h.publisher.err = nil
	h.exec.Flush(t.Context()) // lands
	h.exec.Flush(t.Context()) // a ConfigMap emptied since would be written again
	if n := len(h.publisher.calls); n != 4 {
		t.Fatalf("publish calls = %d, want 4 (the pass, then one per Flush)", n)
	}
	for i, c := range h.publisher.calls {
		if c.Revision != 7 {
			t.Errorf("publish %d of revision %d, want 7", i, c.Revision)
		}
		checkReports(t, fmt.Sprintf("publish %d", i), c.Actions, want)
	}
}

// A new term acts only once its own empty report has landed: with that
// write refused, a 200 that asks for a scale-up patches nothing, the pass
// asks to run again, and the next one, with the write landing, acts.
func TestExecute_ANewTermActsOnlyAfterItsFirstReportLanded(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.publisher.err = fmt.Errorf("write ConfigMap kubehz-system/kubehz-actions: %w", errLostLease)
	h.exec.Flush(t.Context())
	doc := scaling(7, pool("pool-a", 3))
	if retry := h.exec.Execute(t.Context(), doc); !retry {
		t.Error("retry = false, want true: the pass did not run")
	}
	if len(h.cluster.patches) != 0 || h.cluster.ensures != 0 {
		t.Fatalf("patches %+v, cache ensures %d before the term's first report landed", h.cluster.patches, h.cluster.ensures)
	}
	for i, c := range h.publisher.calls {
		if c.Revision != 0 || len(c.Actions) != 0 {
			t.Errorf("publish %d = %+v, want the empty report", i, c)
		}
	}

	h.publisher.err = nil
	h.exec.Execute(t.Context(), doc)
	if len(h.cluster.patches) != 1 {
		t.Fatalf("patches %+v, want the scale-up once the report landed", h.cluster.patches)
	}
	if first := h.publisher.calls[2]; first.Revision != 0 || len(first.Actions) != 0 {
		t.Errorf("first landed write %+v, want the empty report before any act", first)
	}
	checkReports(t, "published", h.publisher.last(t).Actions, []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}})
}

// Reports that stop landing mid-term (RBAC tightened, an admission webhook)
// hold the next pass back as they hold a new term's first: while the
// platform would read the last landed reports as current, a later revision
// asking for another scale-up patches nothing. Once the write lands, that
// pass acts (the control).
func TestExecute_APassActsOnlyOnceThePreviousReportsLanded(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.exec.Flush(t.Context())
	h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3)))
	if len(h.cluster.patches) != 1 {
		t.Fatalf("patches %+v, want the first scale-up", h.cluster.patches)
	}
	h.publisher.err = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "kubehz-actions", errors.New("RBAC"))
	h.exec.Execute(t.Context(), scaling(8, pool("pool-a", 4))) // acts, but its reports do not land
	next := scaling(9, pool("pool-a", 5))
	if retry := h.exec.Execute(t.Context(), next); !retry {
		t.Error("retry = false, want true: the pass did not run")
	}
	if len(h.cluster.patches) != 2 {
		t.Fatalf("patches %+v: a pass acted while the previous pass's reports had not landed", h.cluster.patches)
	}
	h.publisher.err = nil
	h.exec.Execute(t.Context(), next)
	if len(h.cluster.patches) != 3 {
		t.Fatalf("patches %+v, want revision 9's scale-up once the reports landed", h.cluster.patches)
	}
}

// A new leader's executor publishes its own empty document on its first
// Flush, before it has polled: a dead leader's reports stop riding at once.
func TestFlush_NewLeaderPublishesAnEmptyDocumentFirst(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.exec.Flush(t.Context())
	h.exec.Flush(t.Context())
	if want := []published{{0, nil}, {0, nil}}; !reflect.DeepEqual(h.publisher.calls, want) {
		t.Errorf("published %+v, want the empty document on each Flush", h.publisher.calls)
	}
	if h.cluster.ensures != 0 || len(h.cluster.patches) != 0 {
		t.Errorf("the first Flush touched MachineDeployments")
	}
}

func TestClear_DropsEveryReportAndPublishesNone(t *testing.T) {
	for _, seeded := range []bool{true, false} {
		t.Run(fmt.Sprintf("seeded=%v", seeded), func(t *testing.T) {
			h := newHarness(t, newCluster(md("pool-a", 2)))
			if seeded {
				h.seed(7, wire.Action{Type: wire.ActionScale, Target: "pool-a", Status: wire.StatusFailed, Detail: "patch failed: timeout", Revision: 7})
			}
			h.exec.Clear("desired state answered 403")
			if got := h.store.Snapshot(); got != nil || h.store.Revision() != 0 {
				t.Errorf("store holds %v at revision %d, want it cleared", got, h.store.Revision())
			}
			if h.cluster.stops != 1 || h.cluster.ensures != 0 || len(h.cluster.patches) != 0 {
				t.Errorf("stops %d, ensures %d, patches %d; want 1, 0, 0", h.cluster.stops, h.cluster.ensures, len(h.cluster.patches))
			}
			// Published even when already empty: a leader that restarted
			// must still empty a ConfigMap its predecessor filled.
			if want := []published{{0, nil}}; !reflect.DeepEqual(h.publisher.calls, want) {
				t.Errorf("published %+v, want %+v", h.publisher.calls, want)
			}
		})
	}
}

// A platform that keeps the revision and names new pools on every poll must
// not grow the reports without end: each pass keeps the reports of what it
// decided about, the first 100 pools by name, and done ones.
func TestExecute_TheSameRevisionNamingOtherPoolsReplacesTheirReports(t *testing.T) {
	h := rollingHarness(t)
	for pass := range 20 {
		doc := desired.Document{Revision: 7, Execution: desired.Execution{Scaling: true, Upgrades: true}}
		v := "v1.35.2"
		doc.KubernetesVersion = &v
		for i := range 150 {
			// No MachineDeployment has these names: each is a failed report.
			doc.WorkerPools = append(doc.WorkerPools, pool(fmt.Sprintf("gone-%02d-%03d", pass, i), 1))
		}
		h.exec.Execute(t.Context(), doc)
		stored := h.store.Snapshot()
		for _, typ := range []string{wire.ActionScale, wire.ActionUpgrade} {
			var targets []string
			for _, a := range ofType(typ, stored) {
				targets = append(targets, a.Target)
			}
			var want []string
			for i := range 100 { // the first 100 pools by name
				want = append(want, fmt.Sprintf("gone-%02d-%03d", pass, i))
			}
			if !slices.Equal(targets, want) {
				t.Fatalf("pass %d: %s reports of %d pools %v..., want this document's first 100 by name", pass, typ, len(targets), targets[:min(len(targets), 3)])
			}
		}
	}
}

// The rule above on one small case: at the same revision, a pool's done
// report stays after the document stops naming it, and a failed one goes.
func TestExecute_AnUnnamedPoolKeepsItsDoneReportAndLosesItsFailedOne(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3), pool("pool-b", 1)))
	checkReports(t, "first pass", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"},
		{"pool-b", wire.StatusFailed, 7, "no MachineDeployment"},
	})
	h.exec.Execute(t.Context(), scaling(7, pool("pool-c", 1)))
	checkReports(t, "second pass", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"},
		{"pool-c", wire.StatusFailed, 7, "no MachineDeployment"},
	})
}
