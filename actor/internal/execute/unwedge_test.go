package execute_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

// healedWithStuckPods is a harness whose executor deleted pool-a-m1 at
// start, its node-1 unreachable with two pods stuck Terminating, one pod
// not asked to leave, and a stuck pod on another node.
func healedWithStuckPods(t *testing.T) (*healHarness, desired.Document) {
	t.Helper()
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "True", down))
	h.world.pods = []heal.Pod{
		stuckPod("apps", "web-1", "node-1"),
		{Namespace: "apps", Name: "db-0", UID: "uid-db-0", NodeName: "node-1"},
		stuckPod("apps", "web-0", "node-1"),
		stuckPod("apps", "other-0", "node-2"),
	}
	doc := healing(7, healPolicy(1, 0))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 || h.exec.HealMemory.Tracked["pool-a-m1"] == nil {
		t.Fatalf("setup: machine deletes %+v, tracked %v; want pool-a-m1 deleted and tracked",
			h.world.machineDeletes, h.exec.HealMemory.Tracked)
	}
	return h, doc
}

func podNames(pods []heal.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func TestUnwedge_ForceDeletesOnlyStuckPodsOnTheDeadNodeOnce(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)

	want := []podDelete{{"apps", "web-0", "uid-web-0"}, {"apps", "web-1", "uid-web-1"}}
	if !reflect.DeepEqual(h.world.podDeletes, want) {
		t.Fatalf("pod deletes %+v, want %+v", h.world.podDeletes, want)
	}
	if got, want := podNames(h.world.pods), []string{"apps/db-0", "apps/other-0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pods left %v, want %v", got, want)
	}
	wantReports := []report{{"pool-a-m1", wire.StatusDone, 7, "deleted Machine|unwedged|2 pod(s)|node-1"}}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), wantReports)
	checkTyped(t, "published", wire.ActionHeal, h.publisher.last(t).Actions, wantReports)
	if d := h.store.Snapshot()[0].Detail; strings.Contains(d, "failed") {
		t.Errorf("detail %q reports failures, want none", d)
	}

	// A pod that gets stuck later is left alone: the attempt is used.
	h.world.pods = append(h.world.pods, stuckPod("apps", "web-2", "node-1"))
	h.clock.advance(10 * time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 || h.world.podLists != 1 {
		t.Errorf("pod deletes %+v, pod lists %d; want no second unwedge", h.world.podDeletes, h.world.podLists)
	}

	// Teardown ends: the tracking goes, the done report stays.
	delete(h.world.machines, "pool-a-m1")
	delete(h.world.nodes, "node-1")
	h.exec.Execute(t.Context(), doc)
	if len(h.exec.HealMemory.Tracked) != 0 {
		t.Errorf("tracked %v after the Machine is gone, want nothing", h.exec.HealMemory.Tracked)
	}
	checkTyped(t, "after teardown", wire.ActionHeal, h.store.Snapshot(), wantReports)
}

func TestUnwedge_ReportsPodsThatFailedToDelete(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podDeleteErr["apps/web-0"] = apierrors.NewServiceUnavailable("etcd leader changed")
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("pod deletes %+v, want both tried", h.world.podDeletes)
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "unwedged|1 pod(s)|node-1|(1 failed)"},
	})
}

// Force-deleting many pods takes a while, and a node that comes back
// meanwhile may run those still to go: the node is read again every 10
// deletes, and once it reads Ready the rest are left, said in the report.
// While it stays down, all 25 go (the control).
func TestUnwedge_ANodeThatComesBackMidwayKeepsThePodsStillToGo(t *testing.T) {
	for _, comesBack := range []bool{false, true} {
		t.Run(fmt.Sprintf("comes back %v", comesBack), func(t *testing.T) {
			h, doc := healedWithStuckPods(t)
			h.world.pods = nil
			for i := range 25 {
				h.world.pods = append(h.world.pods, stuckPod("apps", fmt.Sprintf("web-%02d", i), "node-1"))
			}
			h.world.slow = func() {
				if comesBack && len(h.world.podDeletes) == 12 {
					h.world.gotNodes = map[string]*cluster.Node{"node-1": node("node-1", "True", h.clock.now)}
				}
			}
			h.clock.advance(300 * time.Second)
			h.exec.Execute(t.Context(), doc)
			want, detail := 25, "unwedged|25 pod(s)|node-1"
			if comesBack {
				want, detail = 20, "unwedged|20 pod(s)|(5 left: the node no longer reads unreachable)"
			}
			if n := len(h.world.podDeletes); n != want {
				t.Errorf("%d pods force-deleted, want %d", n, want)
			}
			checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, detail}})
		})
	}
}

func TestUnwedge_TracksOnlyMachinesThisExecutorDeleted(t *testing.T) {
	cases := []struct {
		name        string
		deleteErr   error
		liveRV      string
		wantTracked bool
	}{
		{name: "a delete that landed is tracked", wantTracked: true},
		{name: "a refused delete is not", deleteErr: apierrors.NewForbidden(machineResource, "pool-a-m1", errors.New("no delete verb"))},
		{name: "a Machine already gone is not", deleteErr: apierrors.NewNotFound(machineResource, "pool-a-m1")},
		{name: "a precondition conflict is not", liveRV: "12"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, poolMD("pool-a", 1))
			h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
			h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
			h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1")}
			if tc.deleteErr != nil {
				h.world.deleteErr["pool-a-m1"] = tc.deleteErr
			}
			if tc.liveRV != "" {
				h.world.liveRV["pool-a-m1"] = tc.liveRV
			}
			doc := healing(7, healPolicy(1, 0))
			h.exec.Execute(t.Context(), doc)
			if _, ok := h.exec.HealMemory.Tracked["pool-a-m1"]; ok != tc.wantTracked {
				t.Fatalf("tracked = %v, want %v", ok, tc.wantTracked)
			}
			// Whatever the outcome, an hour later someone else set it
			// deleting: only a tracked machine is unwedged.
			h.world.deleteErr = map[string]error{}
			h.world.liveRV = map[string]string{}
			h.world.machines["pool-a-m1"].Deleting = true
			h.clock.advance(time.Hour)
			h.exec.Execute(t.Context(), doc)
			if got := len(h.world.podDeletes) == 1; got != tc.wantTracked {
				t.Errorf("pod deletes %+v, want them only for a tracked machine", h.world.podDeletes)
			}
		})
	}
}

func TestUnwedge_NeverTouchesAMachineThisExecutorDidNotDelete(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(deleting(machine("pool-a-m1", "pool-a", "node-1")))
	h.world.addNodes(node("node-1", "Unknown", start.Add(-24*time.Hour)))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1")}
	doc := healing(7, healPolicy(1, 0))
	for range 3 {
		h.exec.Execute(t.Context(), doc)
		h.clock.advance(time.Hour)
	}
	if h.world.podLists != 0 || len(h.world.podDeletes) != 0 || len(h.world.machineDeletes) != 0 {
		t.Errorf("pod lists %d, pod deletes %+v, machine deletes %+v; want none",
			h.world.podLists, h.world.podDeletes, h.world.machineDeletes)
	}
	if h.store.Snapshot() != nil {
		t.Errorf("reports %+v, want none", h.store.Snapshot())
	}
}

func TestUnwedge_RecoveredNodeKeepsTheAttemptForALaterOutage(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.addNodes(node("node-1", "True", start.Add(time.Minute)))
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if h.world.podLists != 0 || len(h.world.podDeletes) != 0 {
		t.Fatalf("pod lists %d, pod deletes %+v for a Ready node; want none", h.world.podLists, h.world.podDeletes)
	}
	if tr := h.exec.HealMemory.Tracked["pool-a-m1"]; tr == nil || tr.Attempted {
		t.Fatalf("tracked %+v, want the attempt unused", tr)
	}

	h.world.addNodes(node("node-1", "Unknown", h.clock.now))
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("pod deletes %+v, want the two stuck pods once the node is Unknown", h.world.podDeletes)
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, "unwedged|2 pod(s)"}})
}

func TestUnwedge_ForbiddenPodDeleteStaysDoneAndIsNeverRetried(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podDeleteErr["apps/web-0"] = apierrors.NewForbidden(podResource, "web-0", errors.New("no delete verb"))
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if want := []podDelete{{"apps", "web-0", "uid-web-0"}}; !reflect.DeepEqual(h.world.podDeletes, want) {
		t.Fatalf("pod deletes %+v, want %+v: a Forbidden stops at once", h.world.podDeletes, want)
	}
	want := []report{{"pool-a-m1", wire.StatusDone, 7, "unwedge forbidden|RBAC|node-1"}}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), want)
	if got := podNames(h.world.pods); len(got) != 4 {
		t.Errorf("pods %v, want all four still there", got)
	}

	h.clock.advance(time.Hour)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 1 || h.world.podLists != 1 {
		t.Errorf("pod deletes %+v, pod lists %d; want no retry", h.world.podDeletes, h.world.podLists)
	}
	checkTyped(t, "later", wire.ActionHeal, h.store.Snapshot(), want)
}

// A delete forbidden after others went through (an admission policy
// guarding one namespace answers 403 too) reports what was force-deleted.
func TestUnwedge_ForbiddenAfterSomeDeletesSaysHowManyWent(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podDeleteErr["apps/web-1"] = apierrors.NewForbidden(podResource, "web-1", errors.New("denied by policy"))
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Fatalf("pod deletes %+v, want web-0 deleted and web-1 refused", h.world.podDeletes)
	}
	want := []report{{"pool-a-m1", wire.StatusDone, 7, "unwedge forbidden|1 pod(s) force-deleted before|node-1"}}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), want)
}

func TestUnwedge_ForbiddenPodListStaysDoneAndIsNeverRetried(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podsErr = apierrors.NewForbidden(podResource, "", errors.New("no list verb"))
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	want := []report{{"pool-a-m1", wire.StatusDone, 7, "unwedge forbidden|RBAC|node-1"}}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), want)

	h.world.podsErr = nil
	h.clock.advance(time.Hour)
	h.exec.Execute(t.Context(), doc)
	if h.world.podLists != 1 || len(h.world.podDeletes) != 0 {
		t.Errorf("pod lists %d, pod deletes %+v; want the list never retried", h.world.podLists, h.world.podDeletes)
	}
	checkTyped(t, "later", wire.ActionHeal, h.store.Snapshot(), want)
}

func TestUnwedge_TransientPodListFailureIsRetried(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podsErr = apierrors.NewServiceUnavailable("etcd leader changed")
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if tr := h.exec.HealMemory.Tracked["pool-a-m1"]; tr == nil || tr.Attempted || len(h.world.podDeletes) != 0 {
		t.Fatalf("tracked %+v, pod deletes %+v; want the attempt unused", tr, h.world.podDeletes)
	}
	h.world.podsErr = nil
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 || h.world.podLists != 2 {
		t.Errorf("pod deletes %+v, pod lists %d; want the unwedge on the next pass", h.world.podDeletes, h.world.podLists)
	}
}

func TestUnwedge_FiresExactlyAtTheEvictionTimeout(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	for _, at := range []time.Duration{2 * time.Minute, 300*time.Second - time.Second} {
		h.clock.set(start.Add(at))
		h.exec.Execute(t.Context(), doc)
		if h.world.podLists != 0 || len(h.world.podDeletes) != 0 {
			t.Fatalf("at +%s: pod lists %d, pod deletes %+v; want none before the timeout", at, h.world.podLists, h.world.podDeletes)
		}
	}
	h.clock.set(start.Add(300 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("at +300s: pod deletes %+v, want the two stuck pods", h.world.podDeletes)
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, "unwedged after 5m0s"}})
}

func TestUnwedge_JoinlessHealHasNothingToUnwedge(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(joinless("pool-a-m1", "pool-a", time.Hour))
	h.world.addNodes(node("node-1", "True", start.Add(-time.Hour)))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1"), stuckPod("apps", "web-1", "")}
	doc := healing(7, healPolicy(1, 0))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 || h.world.nodeGets != 0 {
		t.Fatalf("machine deletes %+v, node re-reads %d; want the joinless Machine deleted without a node read",
			h.world.machineDeletes, h.world.nodeGets)
	}
	h.clock.advance(time.Hour)
	h.exec.Execute(t.Context(), doc)
	if h.world.podLists != 0 || len(h.world.podDeletes) != 0 {
		t.Errorf("pod lists %d, pod deletes %+v; want none for a joinless heal", h.world.podLists, h.world.podDeletes)
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, "no node joined"}})
}

// A fence that refuses (a failed Lease read, a renewal inside the safety
// margin) while the term goes on is not the unwedge failing: its one attempt
// is kept, and the next pass force-deletes the stuck pods.
func TestUnwedge_AFenceRefusalDoesNotUseUpTheAttempt(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.clock.advance(300 * time.Second)
	h.fence.Err = fmt.Errorf("confirm the lease before writing: %w", apierrors.NewServiceUnavailable("etcd leader changed"))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 0 {
		t.Fatalf("pod deletes %+v sent past a refusing fence", h.world.podDeletes)
	}
	h.fence.Err = nil
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("pod deletes %+v, want the two stuck pods once the fence allows", h.world.podDeletes)
	}
}

// The cache may lag a recovery: a node the cache still shows NotReady but
// the apiserver shows Ready gets nothing force-deleted, and the attempt is
// kept.
func TestUnwedge_FreshNodeReadOverridesAStaleCache(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.liveNodes = map[string]*cluster.Node{"node-1": node("node-1", "True", start.Add(time.Minute))}
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if h.world.podLists != 0 || len(h.world.podDeletes) != 0 {
		t.Fatalf("pod lists %d, pod deletes %+v for a node the apiserver shows Ready", h.world.podLists, h.world.podDeletes)
	}
	if tr := h.exec.HealMemory.Tracked["pool-a-m1"]; tr == nil || tr.Attempted {
		t.Fatalf("tracked %+v, want the attempt unused", tr)
	}
}

// A node that recovered and went NotReady again a moment ago may still run
// its pods: nothing is force-deleted until it has been down 60 s.
func TestUnwedge_ANodeDownForLessThanAMinuteIsLeftAlone(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.clock.advance(300 * time.Second)
	h.world.liveNodes = map[string]*cluster.Node{"node-1": node("node-1", "False", h.clock.now.Add(-59*time.Second))}
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 0 {
		t.Fatalf("pod deletes %+v on a node down 59 s", h.world.podDeletes)
	}
	h.clock.advance(time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("pod deletes %+v at 60 s, want the two stuck pods", h.world.podDeletes)
	}
}

// A Machine cache that has not caught up with a healed machine's creation
// does not cost it its unwedge: only a direct List that agrees it is gone
// ends the tracking.
func TestUnwedge_AMachineMissingOnlyFromTheCacheIsStillFollowed(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.liveMachines = maps.Clone(h.world.machines)
	delete(h.world.machines, "pool-a-m1") // the cache lags; the apiserver has it
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if _, ok := h.exec.HealMemory.Tracked["pool-a-m1"]; !ok {
		t.Fatal("tracking dropped on the cache's word alone")
	}
	h.world.machines, h.world.liveMachines = h.world.liveMachines, nil
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 2 {
		t.Errorf("pod deletes %+v, want the two stuck pods", h.world.podDeletes)
	}
	delete(h.world.machines, "pool-a-m1") // now really gone
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if _, ok := h.exec.HealMemory.Tracked["pool-a-m1"]; ok {
		t.Error("tracking kept for a machine a direct List shows gone")
	}
}

func TestUnwedge_EvictionTimeoutRunsFromWhenTheDeleteReturned(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1")}
	h.world.slow = func() { h.clock.advance(40 * time.Second) }
	doc := healing(7, healPolicy(1, 0))
	h.exec.Execute(t.Context(), doc)
	tr := h.exec.HealMemory.Tracked["pool-a-m1"]
	if tr == nil {
		t.Fatal("setup: pool-a-m1 not deleted and tracked")
	}
	returned := start.Add(40 * time.Second)
	if !tr.DeletedAt.Equal(returned) {
		t.Errorf("tracked as deleted at %s, want %s: when the delete returned", tr.DeletedAt, returned)
	}

	// 300 s after the pass began: 40 s short of the eviction timeout.
	h.clock.set(start.Add(300 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 0 {
		t.Fatalf("pod deletes %+v 260 s after the Machine delete returned, want none before 300 s", h.world.podDeletes)
	}
	h.clock.set(returned.Add(300 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 1 {
		t.Errorf("pod deletes %+v 300 s after the Machine delete returned, want the stuck pod", h.world.podDeletes)
	}
}

// The one attempt is used once a delete was sent, even when the pod was
// gone already and the fence then refused the rest: only a refusal before
// the first delete keeps it.
func TestUnwedge_AFenceRefusalAfterTheFirstDeleteUsesUpTheAttempt(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.world.podDeleteErr["apps/web-0"] = apierrors.NewNotFound(podResource, "web-0")
	h.world.slow = func() { h.fence.Err = errors.New("renewed inside the safety margin") }
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if want := []podDelete{{"apps", "web-0", "uid-web-0"}}; !reflect.DeepEqual(h.world.podDeletes, want) {
		t.Fatalf("pod deletes %+v, want %+v before the fence refused", h.world.podDeletes, want)
	}
	h.fence.Err, h.world.slow = nil, nil
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 1 {
		t.Errorf("pod deletes %+v: a second unwedge after a delete had been sent", h.world.podDeletes)
	}
	if tr := h.exec.HealMemory.Tracked["pool-a-m1"]; tr == nil || !tr.Attempted {
		t.Errorf("tracked %+v, want the attempt used", tr)
	}
}

// A Ready condition without a transition time has been down for an unknown
// time, not for the minute the unwedge needs: nothing is force-deleted and
// the attempt is kept.
func TestUnwedge_ANodeDownSinceAnUnknownTimeIsLeftAlone(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.clock.advance(300 * time.Second)
	h.world.liveNodes = map[string]*cluster.Node{"node-1": node("node-1", "Unknown", time.Time{})}
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 0 {
		t.Fatalf("pod deletes %+v on a node with no Ready transition time", h.world.podDeletes)
	}
	if tr := h.exec.HealMemory.Tracked["pool-a-m1"]; tr == nil || tr.Attempted {
		t.Errorf("tracked %+v, want the attempt unused", tr)
	}
}
