package execute_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/wire"
)

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
			name:        "scales 2 to 3 with one patch",
			mds:         []*cluster.MachineDeployment{md("pool-a", 2)},
			pools:       []desired.Pool{pool("pool-a", 3)},
			wantPatches: []patch{{mdNamespace, "pool-a", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":3}}`}},
			wantReports: []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}},
			wantEvents:  []event{{mdNamespace + "/pool-a", false, "KubehzScaled", "desired revision 7: scale done: replicas 2 to 3"}},
			// The next pass finds the MD converged: news once, no write.
			wantSecondEvents: []event{{mdNamespace + "/pool-a", false, "KubehzInSync", "desired revision 7: scale done: already at 3 replicas"}},
		},
		{
			name:        "already at the desired count writes nothing",
			mds:         []*cluster.MachineDeployment{md("pool-a", 3)},
			pools:       []desired.Pool{pool("pool-a", 3)},
			wantReports: []report{{"pool-a", wire.StatusDone, 7, "already at 3 replicas"}},
			wantEvents:  []event{{mdNamespace + "/pool-a", false, "KubehzInSync", "desired revision 7: scale done: already at 3 replicas"}},
		},
		{
			name:  "out of range is refused, never clamped",
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
			name:        "an unmatched pool fails without blocking the other",
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
			name:        "a transient patch error halts the sorted pass and queues the rest",
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
			name:        "an invalid pool name never reaches the API",
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
			if h.fence.Calls != len(tc.wantPatches) {
				t.Errorf("%d fence checks for %d patches, want one per patch", h.fence.Calls, len(tc.wantPatches))
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

func TestExecute_LostLeaseFailsThePoolAndWritesNothing(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 1), md("pool-b", 1)))
	h.fence.Err = errLostLease
	retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 2), pool("pool-b", 2)))
	if !retry {
		t.Error("retry = false, want true")
	}
	if len(h.cluster.patches) != 0 {
		t.Errorf("patches %+v sent without the lease", h.cluster.patches)
	}
	if h.fence.Calls != 1 {
		t.Errorf("%d fence checks, want 1: the refusal halts the pass", h.fence.Calls)
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
	if world.lists != 0 || len(world.patches) != 0 || h.fence.Calls != 0 || len(h.events.events) != 0 {
		t.Errorf("lists %d, patches %d, fence calls %d, events %d; want none", world.lists, len(world.patches), h.fence.Calls, len(h.events.events))
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

// TestExecute_AFailedConfirmingReadLeavesTheDecisionOpen: the cache says
// pool-a is already at 3 and pool-n does not exist, and the direct reads
// that would confirm it fail. Neither may be reported final on the cache's
// word: both wait for the next poll, which reads again, and pool-b, whose
// decision writes, is patched as planned.
func TestExecute_AFailedConfirmingReadLeavesTheDecisionOpen(t *testing.T) {
	world := newCluster(md("pool-a", 3), md("pool-b", 1))
	world.getErr = errors.New("connection reset by peer")
	h := newHarness(t, world)
	retry := h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3), pool("pool-b", 2), pool("pool-n", 2)))
	if !retry {
		t.Error("retry = false, want true")
	}
	const unconfirmed = "cannot confirm the cached MachineDeployment on a direct read: connection reset by peer; retrying next poll"
	checkReports(t, "reports", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusPending, 7, unconfirmed},
		{"pool-b", wire.StatusDone, 7, "replicas 1 to 2"},
		{"pool-n", wire.StatusPending, 7, unconfirmed},
	})
	if len(world.patches) != 1 || world.patches[0].Name != "pool-b" {
		t.Errorf("patches %+v, want only pool-b's", world.patches)
	}

	// Control: once the reads answer, the same cache is final.
	world.getErr = nil
	h.exec.Execute(t.Context(), scaling(7, pool("pool-a", 3), pool("pool-b", 2), pool("pool-n", 2)))
	checkReports(t, "reports", h.store.Snapshot(), []report{
		{"pool-a", wire.StatusDone, 7, "already at 3 replicas"},
		{"pool-b", wire.StatusDone, 7, "already at 2 replicas"},
		{"pool-n", wire.StatusFailed, 7, "no MachineDeployment"},
	})
}

// A platform that bumps the revision on every poll makes every report new to
// the store, but an outcome already recorded on its MachineDeployment this
// term is not recorded again: a pool in sync gets one KubehzInSync over
// three revisions, and a real change (revision 10 asks for a scale-up) is
// news again.
func TestExecute_ANewRevisionWithTheSameOutcomeIsNoNewEvent(t *testing.T) {
	h := newHarness(t, newCluster(md("pool-a", 3)))
	for rev := int64(7); rev <= 9; rev++ {
		h.exec.Execute(t.Context(), scaling(rev, pool("pool-a", 3)))
	}
	if n := len(h.events.events); n != 1 || h.events.events[0].Reason != "KubehzInSync" {
		t.Fatalf("events over three revisions of the same outcome %+v, want one KubehzInSync", h.events.events)
	}
	h.exec.Execute(t.Context(), scaling(10, pool("pool-a", 4)))
	if n := len(h.events.events); n != 2 || h.events.events[1].Reason != "KubehzScaled" {
		t.Errorf("events %+v, want a KubehzScaled for revision 10's scale-up", h.events.events)
	}
}
