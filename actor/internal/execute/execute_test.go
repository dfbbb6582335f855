package execute_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/shared/desired"
	"kubehz.dev/agent/shared/wire"
)

var mdResource = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}

// report is what a test pins of one stored action: everything but the
// detail's exact wording, of which it names the keyword.
type report struct {
	Target, Status string
	Revision       int64
	Keyword        string
}

func checkReports(t *testing.T, what string, got []wire.Action, want []report) {
	t.Helper()
	var shape []report
	for _, a := range got {
		if a.Type != wire.ActionScale {
			t.Errorf("%s: action %+v is not of type scale", what, a)
		}
		shape = append(shape, report{a.Target, a.Status, a.Revision, ""})
	}
	var wantShape []report
	for _, w := range want {
		wantShape = append(wantShape, report{w.Target, w.Status, w.Revision, ""})
	}
	if !reflect.DeepEqual(shape, wantShape) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
	for i, w := range want {
		if !strings.Contains(got[i].Detail, w.Keyword) {
			t.Errorf("%s: detail of %s is %q, want it to mention %q", what, w.Target, got[i].Detail, w.Keyword)
		}
	}
}

func scaling(rev int64, pools ...desired.Pool) desired.Document {
	return desired.Document{Revision: rev, WorkerPools: pools, Execution: desired.Execution{Scaling: true}}
}

func pool(name string, replicas int) desired.Pool {
	n := int64(replicas)
	return desired.Pool{Name: name, MachineType: "cpx31", DesiredReplicas: &n}
}

// seed leaves the store as a scaling pass of revision rev left it.
func (h *harness) seed(rev int64, actions ...wire.Action) {
	h.store.Begin(rev)
	for _, a := range actions {
		h.store.Upsert(a)
	}
}

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
			if h.fence.calls != 0 || len(h.events.events) != 0 {
				t.Errorf("fence calls %d, events %v; want none", h.fence.calls, h.events.events)
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

func TestExecute_Scaling(t *testing.T) {
	transient := apierrors.NewServiceUnavailable("etcd leader changed")
	cases := []struct {
		name     string
		mds      []*cluster.MachineDeployment
		patchErr map[string]error
		pools    []desired.Pool
		// The first pass.
		wantPatches []patch
		wantReports []report
		wantRetry   bool
		wantEvents  []event
		// A second pass with the same document, on what the first left.
		wantSecondPatches int
		wantSecondEvents  []event
	}{
		{
			name:        "43 scales 2 to 3 with one patch",
			mds:         []*cluster.MachineDeployment{md("pool-a", 2)},
			pools:       []desired.Pool{pool("pool-a", 3)},
			wantPatches: []patch{{mdNamespace, "pool-a", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":3}}`}},
			wantReports: []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}},
			wantEvents:  []event{{mdNamespace + "/pool-a", false, "KubehzScaled", "desired revision 7: scale done: replicas 2 to 3"}},
			// The next pass finds the MD converged: news once, no write.
			wantSecondEvents: []event{{mdNamespace + "/pool-a", false, "KubehzInSync", "desired revision 7: scale done: already at 3 replicas"}},
		},
		{
			name:        "44 already at the desired count writes nothing",
			mds:         []*cluster.MachineDeployment{md("pool-a", 3)},
			pools:       []desired.Pool{pool("pool-a", 3)},
			wantReports: []report{{"pool-a", wire.StatusDone, 7, "already at 3 replicas"}},
			wantEvents:  []event{{mdNamespace + "/pool-a", false, "KubehzInSync", "desired revision 7: scale done: already at 3 replicas"}},
		},
		{
			name:  "45 out of range is refused, never clamped",
			mds:   []*cluster.MachineDeployment{md("pool-a", 2), md("pool-b", 2)},
			pools: []desired.Pool{pool("pool-a", 51), pool("pool-b", -1)},
			wantReports: []report{
				{"pool-a", wire.StatusFailed, 7, "KUBEHZ_MAX_REPLICAS"},
				{"pool-b", wire.StatusFailed, 7, "KUBEHZ_MAX_REPLICAS"},
			},
			wantEvents: []event{
				{mdNamespace + "/pool-a", true, "KubehzRefused", "desired revision 7: scale failed: desired replicas 51 is outside 0..50 (KUBEHZ_MAX_REPLICAS); refusing, not clamping"},
				{mdNamespace + "/pool-b", true, "KubehzRefused", "desired revision 7: scale failed: desired replicas -1 is outside 0..50 (KUBEHZ_MAX_REPLICAS); refusing, not clamping"},
			},
		},
		{
			name:        "46 an unmatched pool fails without blocking the other",
			mds:         []*cluster.MachineDeployment{md("pool-b", 1)},
			pools:       []desired.Pool{pool("pool-a", 2), pool("pool-b", 2)},
			wantPatches: []patch{{mdNamespace, "pool-b", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`}},
			wantReports: []report{
				{"pool-a", wire.StatusFailed, 7, "no MachineDeployment"},
				{"pool-b", wire.StatusDone, 7, "replicas 1 to 2"},
			},
			// No object to put an event on for the unmatched pool.
			wantEvents:       []event{{mdNamespace + "/pool-b", false, "KubehzScaled", "desired revision 7: scale done: replicas 1 to 2; machine-controller reconciles the Machines with the cluster's own credentials"}},
			wantSecondEvents: []event{{mdNamespace + "/pool-b", false, "KubehzInSync", "desired revision 7: scale done: already at 2 replicas"}},
		},
		{
			name:        "50 a transient patch error halts the sorted pass and queues the rest",
			mds:         []*cluster.MachineDeployment{md("a-pool", 1), md("b-pool", 1)},
			patchErr:    map[string]error{"a-pool": transient},
			pools:       []desired.Pool{pool("b-pool", 2), pool("a-pool", 2)},
			wantPatches: []patch{{mdNamespace, "a-pool", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`}},
			wantReports: []report{
				{"a-pool", wire.StatusFailed, 7, "patch failed: etcd leader changed"},
				{"b-pool", wire.StatusPending, 7, "queued"},
			},
			wantRetry:         true,
			wantEvents:        []event{{mdNamespace + "/a-pool", true, "KubehzRefused", "desired revision 7: scale failed: patch failed: etcd leader changed"}},
			wantSecondPatches: 1, // the retry pass tries again; the same failure is no news
		},
		{
			name:        "after a halt every later pool is queued, even one needing no write",
			mds:         []*cluster.MachineDeployment{md("a-pool", 1), md("b-pool", 2)},
			patchErr:    map[string]error{"a-pool": transient},
			pools:       []desired.Pool{pool("c-pool", 1), pool("b-pool", 2), pool("a-pool", 2)},
			wantPatches: []patch{{mdNamespace, "a-pool", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`}},
			wantReports: []report{
				{"a-pool", wire.StatusFailed, 7, "patch failed"},
				{"b-pool", wire.StatusPending, 7, "queued"},
				{"c-pool", wire.StatusPending, 7, "queued"},
			},
			wantRetry:         true,
			wantEvents:        []event{{mdNamespace + "/a-pool", true, "KubehzRefused", "desired revision 7: scale failed: patch failed: etcd leader changed"}},
			wantSecondPatches: 1,
		},
		{
			name:        "a forbidden patch names the RBAC overlay",
			mds:         []*cluster.MachineDeployment{md("pool-a", 1)},
			patchErr:    map[string]error{"pool-a": apierrors.NewForbidden(mdResource, "pool-a", errors.New("no patch verb"))},
			pools:       []desired.Pool{pool("pool-a", 2)},
			wantPatches: []patch{{mdNamespace, "pool-a", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`}},
			wantReports: []report{{"pool-a", wire.StatusFailed, 7, "RBAC"}},
			wantRetry:   true,
			wantEvents: []event{{mdNamespace + "/pool-a", true, "KubehzRefused",
				`desired revision 7: scale failed: patch failed: RBAC: the actor's Role (deploy/actor) must grant patch on machinedeployments.cluster.k8s.io in namespace "kube-system": machinedeployments.cluster.k8s.io "pool-a" is forbidden: no patch verb`}},
			wantSecondPatches: 1,
		},
		{
			name:     "a stale read is re-evaluated, not retried blindly, and does not halt",
			mds:      []*cluster.MachineDeployment{md("a-pool", 1), md("b-pool", 1)},
			patchErr: map[string]error{"a-pool": apierrors.NewConflict(mdResource, "a-pool", errors.New("the object has been modified"))},
			pools:    []desired.Pool{pool("a-pool", 2), pool("b-pool", 2)},
			wantPatches: []patch{
				{mdNamespace, "a-pool", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`},
				{mdNamespace, "b-pool", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":2}}`},
			},
			wantReports: []report{
				{"a-pool", wire.StatusPending, 7, "stale read"},
				{"b-pool", wire.StatusDone, 7, "replicas 1 to 2"},
			},
			wantRetry: true,
			wantEvents: []event{
				{mdNamespace + "/a-pool", false, "KubehzPending", `desired revision 7: scale pending: stale read; re-evaluating next poll (MachineDeployment "a-pool" changed since it was read)`},
				{mdNamespace + "/b-pool", false, "KubehzScaled", "desired revision 7: scale done: replicas 1 to 2; machine-controller reconciles the Machines with the cluster's own credentials"},
			},
			wantSecondPatches: 1,
			wantSecondEvents:  []event{{mdNamespace + "/b-pool", false, "KubehzInSync", "desired revision 7: scale done: already at 2 replicas"}},
		},
		{
			name:        "53 an invalid pool name never reaches the API",
			mds:         []*cluster.MachineDeployment{md("pool-a", 1)},
			pools:       []desired.Pool{pool("Not A Name!", 2)},
			wantReports: []report{{"Not A Name!", wire.StatusFailed, 7, "invalid pool name"}},
		},
		{
			name:        "an empty pool name is not reported at all",
			mds:         []*cluster.MachineDeployment{md("pool-a", 1)},
			pools:       []desired.Pool{pool("", 2)},
			wantReports: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			world := newCluster(tc.mds...)
			for name, err := range tc.patchErr {
				world.patchErr[name] = err
			}
			h := newHarness(t, world)
			doc := scaling(7, tc.pools...)

			retry := h.exec.Execute(t.Context(), doc)
			if retry != tc.wantRetry {
				t.Errorf("retry = %v, want %v", retry, tc.wantRetry)
			}
			if !reflect.DeepEqual(world.patches, tc.wantPatches) {
				t.Errorf("patches:\n got %+v\nwant %+v", world.patches, tc.wantPatches)
			}
			if h.fence.calls != len(tc.wantPatches) {
				t.Errorf("%d fence checks for %d patches, want one per patch", h.fence.calls, len(tc.wantPatches))
			}
			checkReports(t, "reports", h.store.Snapshot(), tc.wantReports)
			checkReports(t, "published", h.publisher.last(t).Actions, tc.wantReports)
			checkEvents(t, "first pass", h.events.events, tc.wantEvents)

			h.events.events = nil
			h.exec.Execute(t.Context(), doc)
			if n := len(world.patches) - len(tc.wantPatches); n != tc.wantSecondPatches {
				t.Errorf("second pass sent %d patches, want %d", n, tc.wantSecondPatches)
			}
			checkEvents(t, "second pass", h.events.events, tc.wantSecondEvents)
		})
	}
}

// checkEvents compares the events, allowing the message of a done scale to
// carry a note after its "replicas A to B" head.
func checkEvents(t *testing.T, what string, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s events:\n got %+v\nwant %+v", what, got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.MD != w.MD || g.Warning != w.Warning || g.Reason != w.Reason || !strings.HasPrefix(g.Message, w.Message) {
			t.Errorf("%s event %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

func TestExecute_LostLeaseFailsThePoolAndWritesNothing(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 1), md("pool-b", 1)))
	h.fence.err = errLostLease
	retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 2), pool("pool-b", 2)))
	if !retry {
		t.Error("retry = false, want true")
	}
	if len(h.cluster.patches) != 0 {
		t.Errorf("patches %+v sent without the lease", h.cluster.patches)
	}
	if h.fence.calls != 1 {
		t.Errorf("%d fence checks, want 1: the refusal halts the pass", h.fence.calls)
	}
	checkReports(t, "reports", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusFailed, 7, errLostLease.Error()},
		{"pool-b", wire.StatusPending, 7, "queued"},
	})
}

func TestExecute_ListFailureFailsEveryPoolAndRetries(t *testing.T) {
	world := newCluster(md("pool-a", 1))
	world.ensureErr = errors.New(`the server could not find the requested resource (get machinedeployments.cluster.k8s.io)`)
	h := newHarness(t, world)
	retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-b", 2), pool("pool-a", 2)))
	if !retry {
		t.Error("retry = false, want true")
	}
	checkReports(t, "reports", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusFailed, 7, "list MachineDeployments"},
		{"pool-b", wire.StatusFailed, 7, "list MachineDeployments"},
	})
	for _, a := range h.store.Snapshot() {
		if !strings.Contains(a.Detail, mdNamespace) || !strings.Contains(a.Detail, "could not find the requested resource") {
			t.Errorf("detail %q should name the namespace and the error", a.Detail)
		}
	}
	if world.lists != 0 || len(world.patches) != 0 || h.fence.calls != 0 || len(h.events.events) != 0 {
		t.Errorf("lists %d, patches %d, fence calls %d, events %d; want none", world.lists, len(world.patches), h.fence.calls, len(h.events.events))
	}
}

func TestExecute_NoPoolsNeverLists(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 1)))
	if retry := h.exec.Execute(t.Context(), scaling(7)); retry {
		t.Error("retry = true, want false")
	}
	if h.cluster.ensures != 0 || h.cluster.lists != 0 {
		t.Errorf("ensures %d, lists %d with no pools; want 0, 0", h.cluster.ensures, h.cluster.lists)
	}
	if want := (published{7, nil}); !reflect.DeepEqual(h.publisher.last(t), want) {
		t.Errorf("published %+v, want %+v", h.publisher.last(t), want)
	}
}

// A report write that fails (an apiserver blip, two conflicts) must not be
// lost until the document changes: the pass's result is unchanged, and every
// Flush writes the reports again until one lands; then Flush costs nothing.
func TestExecute_FailedPublishIsWrittenAgainByFlushUntilItLands(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.publisher.err = fmt.Errorf("write ConfigMap kubehz-system/kubehz-actions: %w", errLostLease)
	if retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3))); retry {
		t.Error("retry = true, want false")
	}
	want := []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}}
	checkReports(t, "reports", h.store.Snapshot(), want)

	h.exec.Flush(t.Context()) // still failing
	h.publisher.err = nil
	h.exec.Flush(t.Context()) // lands
	h.exec.Flush(t.Context()) // nothing left to write
	h.exec.Flush(t.Context())
	if n := len(h.publisher.calls); n != 3 {
		t.Fatalf("publish calls = %d, want 3 (the pass, a failed flush, the flush that landed)", n)
	}
	last := h.publisher.last(t)
	if last.Revision != 7 {
		t.Errorf("republished revision %d, want 7", last.Revision)
	}
	checkReports(t, "republished", last.Actions, want)
}

// A new leader's executor publishes its own empty document on its first
// Flush, before it has polled: a dead leader's reports stop riding at once.
func TestFlush_NewLeaderPublishesAnEmptyDocumentFirst(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 2)))
	h.exec.Flush(t.Context())
	h.exec.Flush(t.Context())
	if want := []published{{0, nil}}; !reflect.DeepEqual(h.publisher.calls, want) {
		t.Errorf("published %+v, want one empty document", h.publisher.calls)
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

// TestExecute_LaggingCacheIsConfirmedBeforeAFinalNoWriteDecision: the cache
// says pool-a is already at 3 and pool-n does not exist, but the apiserver
// has since moved on; a direct read catches both and the pass acts on it.
func TestExecute_LaggingCacheIsConfirmedBeforeAFinalNoWriteDecision(t *testing.T) {
	world := newCluster(md("pool-a", 3))
	fresh := md("pool-a", 2)
	fresh.ResourceVersion = "9"
	world.live = map[string]*cluster.MachineDeployment{"pool-a": fresh, "pool-n": md("pool-n", 1)}
	h := newHarness(t, world)
	h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3), pool("pool-n", 2)))
	if len(world.patches) != 2 {
		t.Fatalf("patches %+v, want pool-a and pool-n patched on the fresh reads", world.patches)
	}
	for _, p := range world.patches {
		if p.Name == "pool-a" && !strings.Contains(p.Body, `"9"`) {
			t.Errorf("pool-a patch %s does not carry the freshly read resourceVersion 9", p.Body)
		}
	}
}
