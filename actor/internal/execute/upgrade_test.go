package execute_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/wire"
)

const rollBody = `{"metadata":{"resourceVersion":"5"},"spec":{"template":{"spec":{"versions":{"kubelet":"v1.35.6"}}}}}`

// upgradeReports compares the upgrade reports exactly.
func upgradeReports(t *testing.T, what string, h *healHarness, want ...wire.Action) {
	t.Helper()
	if got := ofType(wire.ActionUpgrade, h.store.Snapshot()); !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func upgradeAction(pool, status, detail string) wire.Action {
	return wire.Action{Type: wire.ActionUpgrade, Target: pool, Status: status, Detail: detail, Revision: 9}
}

func TestUpgrade_RollPatchesTheKubeletAndReportsProgressUntilConverged(t *testing.T) {
	h := rollingHarness(t)
	doc := upgrading(9, "v1.35.6", "pool-a")

	if retry := h.exec.Execute(t.Context(), doc); !retry {
		t.Error("first pass: retry = false, want true")
	}
	want := []patch{{mdNamespace, "pool-a", rollBody}}
	if !reflect.DeepEqual(h.patcher.patches, want) {
		t.Fatalf("patches:\n got %+v\nwant %+v", h.patcher.patches, want)
	}
	if h.fence.Calls != 1 {
		t.Errorf("%d fence checks, want 1", h.fence.Calls)
	}
	upgradeReports(t, "first pass", h, upgradeAction("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/2)"))
	if got := ofType(wire.ActionUpgrade, h.publisher.last(t).Actions); len(got) != 1 || got[0].Detail != "v1.34.9 → v1.35.6 (0/2)" {
		t.Errorf("published %+v, want the in-progress report", got)
	}

	// machine-controller replaces one machine.
	h.world.machines["pool-a-m1"].Kubelet = "v1.35.6"
	if retry := h.exec.Execute(t.Context(), doc); !retry {
		t.Error("mid-roll: retry = false, want true")
	}
	upgradeReports(t, "mid-roll", h, upgradeAction("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/2)"))

	h.world.machines["pool-a-m2"].Kubelet = "v1.35.6"
	if retry := h.exec.Execute(t.Context(), doc); retry {
		t.Error("converged: retry = true, want false")
	}
	upgradeReports(t, "converged", h, upgradeAction("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)"))
	if len(h.patcher.patches) != 1 {
		t.Errorf("%d patches, want the one roll", len(h.patcher.patches))
	}
	if h.world.nodeEnsures != 0 {
		t.Errorf("upgrades ensured the Node cache %d times, want 0", h.world.nodeEnsures)
	}
}

// A leader that takes over mid-roll (its predecessor sent the patch) reports
// the roll it finds, from the kubelet of the first Machine not yet at
// target, and its completion: the platform sees the revision's upgrade done.
// A pool always at target is never reported.
func TestUpgrade_ARollFoundMidRollIsReportedToItsEnd(t *testing.T) {
	rolled := poolMD("pool-a", 2)
	rolled.Kubelet = "v1.35.6"
	steady := poolMD("pool-b", 1)
	steady.Kubelet = "v1.35.6"
	h := newHealHarness(t, rolled, steady)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
		machine("pool-b-m1", "pool-b", "node-3"))
	h.world.machines["pool-a-m2"].Kubelet = "v1.35.6"
	h.world.machines["pool-b-m1"].Kubelet = "v1.35.6"
	h.trustControlPlane()
	doc := upgrading(9, "v1.35.6", "pool-a", "pool-b")

	h.exec.Execute(t.Context(), doc)
	upgradeReports(t, "found mid-roll", h, upgradeAction("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/2)"))
	h.world.machines["pool-a-m1"].Kubelet = "v1.35.6"
	h.exec.Execute(t.Context(), doc)
	upgradeReports(t, "converged", h, upgradeAction("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)"))
	if len(h.patcher.patches) != 0 {
		t.Errorf("patches %+v, want none: the roll was already sent", h.patcher.patches)
	}
}

func TestUpgrade_ControlPlaneRefusalsPatchNothing(t *testing.T) {
	cases := []struct {
		name       string
		version    string
		versionErr error
		keywords   []string
	}{
		{name: "unknown version", versionErr: errors.New("discovery: connection refused"),
			keywords: []string{"control plane version unknown"}},
		{name: "an unparsable version", version: "vX.Y.Z", keywords: []string{"control plane version unknown"}},
		{name: "control plane behind the target", version: "v1.34.3",
			keywords: []string{"control plane not yet at target", "v1.34.3", "v1.35.6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := rollingHarness(t)
			h.version.version, h.version.err = tc.version, tc.versionErr
			h.trustControlPlane()
			if retry := h.exec.Execute(t.Context(), upgrading(9, "v1.35.6", "pool-a")); !retry {
				t.Error("retry = false, want true")
			}
			if len(h.patcher.patches) != 0 || h.fence.Calls != 0 {
				t.Errorf("patches %+v, fence checks %d; want none", h.patcher.patches, h.fence.Calls)
			}
			checkTyped(t, "store", wire.ActionUpgrade, h.store.Snapshot(),
				[]report{{"pool-a", wire.StatusFailed, 9, strings.Join(tc.keywords, "|")}})
		})
	}
}

func TestUpgrade_OnePoolRollsAtATime(t *testing.T) {
	h := rollingHarness(t, poolMD("pool-b", 1))
	h.world.add(machine("pool-b-m1", "pool-b", "node-3"))
	doc := upgrading(9, "v1.35.6", "pool-b", "pool-a")

	h.exec.Execute(t.Context(), doc)
	upgradeReports(t, "first pass", h,
		upgradeAction("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/2)"),
		upgradeAction("pool-b", wire.StatusPending, `one pool rolls at a time; waiting for pool "pool-a" to converge`))

	h.world.machines["pool-a-m1"].Kubelet = "v1.35.6"
	h.world.machines["pool-a-m2"].Kubelet = "v1.35.6"
	if retry := h.exec.Execute(t.Context(), doc); !retry {
		t.Error("retry = false, want true while pool-b rolls")
	}
	upgradeReports(t, "pool-a converged", h,
		upgradeAction("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)"),
		upgradeAction("pool-b", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)"))
	if len(h.patcher.patches) != 2 || h.patcher.patches[1].Name != "pool-b" {
		t.Errorf("patches %+v, want pool-a then pool-b", h.patcher.patches)
	}
}

func TestUpgrade_PatchFailureQueuesTheRest(t *testing.T) {
	h := rollingHarness(t, poolMD("pool-b", 1))
	h.world.add(machine("pool-b-m1", "pool-b", "node-3"))
	h.patcher.err["pool-a"] = apierrors.NewForbidden(mdResource, "pool-a", errors.New("no patch verb"))
	if retry := h.exec.Execute(t.Context(), upgrading(9, "v1.35.6", "pool-a", "pool-b")); !retry {
		t.Error("retry = false, want true")
	}
	checkTyped(t, "store", wire.ActionUpgrade, h.store.Snapshot(), []report{
		{"pool-a", wire.StatusFailed, 9, "patch failed|RBAC"},
		{"pool-b", wire.StatusPending, 9, "queued"},
	})
	if len(h.patcher.patches) != 1 {
		t.Errorf("patches %+v, want only pool-a's attempt", h.patcher.patches)
	}
}

func TestUpgrade_NoDesiredVersionReadsNothing(t *testing.T) {
	h := rollingHarness(t)
	if retry := h.exec.Execute(t.Context(), upgrading(9, "", "pool-a")); retry {
		t.Error("retry = true, want false")
	}
	if h.world.machineEnsures != 0 || h.world.machineLists != 0 || h.cluster.ensures != 0 || h.version.calls != 0 {
		t.Errorf("Machine ensures %d, lists %d, MD ensures %d, version reads %d; want none",
			h.world.machineEnsures, h.world.machineLists, h.cluster.ensures, h.version.calls)
	}
	if h.world.machineStops != 1 {
		t.Errorf("Machine cache stops %d, want 1", h.world.machineStops)
	}
	if h.store.Snapshot() != nil || len(h.patcher.patches) != 0 {
		t.Errorf("reports %+v, patches %+v; want none", h.store.Snapshot(), h.patcher.patches)
	}
}

// A roll is not a heal: the healer counts the machines a roll set deleting
// against its budget, and never unwedges them. With maxUnhealthy 2 the two
// NotReady workers (one the roll is replacing) are no storm, so what holds
// the heal back is the budget the roll's two deletes use up.
func TestUpgrade_RollReplacementsUseUpTheHealingBudget(t *testing.T) {
	h := rollingHarness(t)
	h.world.machines["pool-a-m1"].Deleting = true // machine-controller replaces them
	h.world.machines["pool-a-m2"].Deleting = true
	h.world.add(machine("pool-a-m3", "pool-a", "node-3"))
	h.world.addNodes(node("node-1", "Unknown", start.Add(-24*time.Hour)), node("node-3", "False", start.Add(-time.Hour)))
	h.world.pods = append(h.world.pods, stuckPod("apps", "web-0", "node-1"))
	doc := healing(9, healPolicy(2, 0))
	doc.Execution.Upgrades = true
	v := "v1.35.6"
	doc.KubernetesVersion = &v
	doc.WorkerPools = upgrading(9, v, "pool-a").WorkerPools

	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m3", wire.StatusPending, 9, "2 disruption(s) already in flight"},
	})
	if len(h.world.machineDeletes) != 0 || h.world.podLists != 0 || len(h.world.podDeletes) != 0 {
		t.Errorf("machine deletes %+v, pod lists %d, pod deletes %+v; want none",
			h.world.machineDeletes, h.world.podLists, h.world.podDeletes)
	}
}

// docs/contract.md#acting-gate: machine-controller takes a roll's first
// Machines down only once the patch reaches it, so healing in the pass that
// started the roll counts maxUnavailable of the pool as in flight, unless
// the apiserver refused the patch. pool-a (4 replicas) rolls; pool-b, at
// target, has a dead worker; the budget is 2.
func TestUpgrade_ARollStartedInTheSamePassCountsWhatItMayTakeDown(t *testing.T) {
	for _, tc := range []struct {
		name           string
		maxUnavailable *intstr.IntOrString
		patchErr       error
		wantReport     report
	}{
		{"the default takes nothing down", nil, nil,
			report{"pool-b-m1", wire.StatusDone, 9, "deleted Machine"}},
		{"1 of a budget of 2 leaves 1", ptr(intstr.FromInt32(1)), nil,
			report{"pool-b-m1", wire.StatusDone, 9, "deleted Machine"}},
		{"2 use a budget of 2", ptr(intstr.FromInt32(2)), nil,
			report{"pool-b-m1", wire.StatusPending, 9, "2 disruption(s) already in flight (maxUnhealthy 2)"}},
		{"50% of 4 uses a budget of 2", ptr(intstr.FromString("50%")), nil,
			report{"pool-b-m1", wire.StatusPending, 9, "2 disruption(s) already in flight (maxUnhealthy 2)"}},
		{"a roll that timed out may have started", ptr(intstr.FromInt32(2)), context.DeadlineExceeded,
			report{"pool-b-m1", wire.StatusPending, 9, "2 disruption(s) already in flight"}},
		{"a roll the apiserver refused takes nothing down", ptr(intstr.FromInt32(2)),
			apierrors.NewConflict(schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}, "pool-a", errors.New("modified")),
			report{"pool-b-m1", wire.StatusDone, 9, "deleted Machine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rolled := poolMD("pool-a", 4)
			rolled.Rollout.MaxUnavailable = tc.maxUnavailable
			atTarget := poolMD("pool-b", 1)
			atTarget.Kubelet = "v1.35.6"
			h := rollingHarness(t, atTarget)
			h.cluster.records["pool-a"] = rolled
			h.world.add(machine("pool-a-m3", "pool-a", "node-3"), machine("pool-a-m4", "pool-a", "node-4"),
				machine("pool-b-m1", "pool-b", "node-b"))
			h.world.machines["pool-b-m1"].Kubelet = "v1.35.6"
			h.world.addNodes(node("node-b", "False", start.Add(-10*time.Minute)))
			if tc.patchErr != nil {
				h.patcher.err["pool-a"] = tc.patchErr
			}
			doc := healing(9, healPolicy(2, 0))
			doc.Execution.Upgrades = true
			v := "v1.35.6"
			doc.KubernetesVersion = &v

			h.exec.Execute(t.Context(), doc)
			if len(h.patcher.patches) != 1 || h.patcher.patches[0].Name != "pool-a" {
				t.Fatalf("patches %+v, want pool-a's roll", h.patcher.patches)
			}
			checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{tc.wantReport})
		})
	}
}

func ptr[T any](v T) *T { return &v }

// A roll starts only on a direct read: a MachineDeployment cache that has
// not yet seen this term's own patch of pool-a shows it idle, and pool-b
// would start rolling beside it.
func TestUpgrade_ARollStartsOnlyOnAFreshRead(t *testing.T) {
	h := rollingHarness(t, poolMD("pool-b", 1))
	h.world.add(machine("pool-b-m1", "pool-b", "node-3"))
	h.exec.Execute(t.Context(), upgrading(9, "v1.35.6", "pool-a"))
	if len(h.patcher.patches) != 1 {
		t.Fatalf("patches %+v, want pool-a's roll", h.patcher.patches)
	}
	// The cache lags: it still holds pool-a's old template; the apiserver
	// has the patch.
	h.cluster.mu.Lock()
	h.cluster.live = maps.Clone(h.cluster.records)
	stale := *h.cluster.records["pool-a"]
	stale.Kubelet = "v1.34.9"
	h.cluster.records["pool-a"] = &stale
	h.cluster.mu.Unlock()

	h.exec.Execute(t.Context(), upgrading(10, "v1.35.6", "pool-a", "pool-b"))
	if len(h.patcher.patches) != 1 {
		t.Fatalf("patches %+v: pool-b rolled while pool-a still rolls", h.patcher.patches)
	}
	got := ofType(wire.ActionUpgrade, h.store.Snapshot())
	if len(got) != 2 || got[1].Target != "pool-b" || got[1].Status != wire.StatusPending || !strings.Contains(got[1].Detail, "pool-a") {
		t.Errorf("reports %+v, want pool-b pending behind pool-a", got)
	}
}

// TestUpgrade_OneUpgradedAPIServerNeverOpensTheGate: the control plane is
// halfway from v1.34 to v1.35; /version answers from the one apiserver
// already at v1.35.6 while two control-plane Nodes still run v1.34.3. Over
// three passes 5 s apart nothing rolls to v1.35.6: the first two wait for
// the changed minimum to hold, the third names it.
func TestUpgrade_OneUpgradedAPIServerNeverOpensTheGate(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.nodes = map[string]string{"cp-1": "v1.35.6", "cp-2": "v1.34.3", "cp-3": "v1.34.3"}
	doc := upgrading(9, "v1.35.6", "pool-a")
	for pass := range 3 {
		if pass > 0 {
			h.clock.advance(5 * time.Second)
		}
		h.exec.Execute(t.Context(), doc)
		if len(h.patcher.patches) != 0 {
			t.Fatalf("pass %d rolled %+v while Nodes cp-2 and cp-3 run v1.34.3", pass+1, h.patcher.patches)
		}
	}
	checkTyped(t, "third pass", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane not yet at target|observed v1.34.3"}})
}

// TestUpgrade_ANewTermRollsOnlyOnceEverySourceAgreedForTenSeconds is the
// control: every source at v1.35.6, and a term that has read nothing yet
// refuses as unknown at 0 s and 5 s and rolls at 10 s.
func TestUpgrade_ANewTermRollsOnlyOnceEverySourceAgreedForTenSeconds(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.nodes = map[string]string{"cp-1": "v1.35.6", "cp-2": "v1.35.6+k3s1", "cp-3": "1.35.6"}
	h.exec.CPGate = upgrade.ControlPlaneGate{} // a new term
	doc := upgrading(9, "v1.35.6", "pool-a")
	for pass := range 2 {
		if pass > 0 {
			h.clock.advance(5 * time.Second)
		}
		h.exec.Execute(t.Context(), doc)
		if len(h.patcher.patches) != 0 {
			t.Fatalf("pass %d rolled %+v before the version held 10 s", pass+1, h.patcher.patches)
		}
		checkTyped(t, "waiting", wire.ActionUpgrade, h.store.Snapshot(),
			[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown"}})
	}
	h.clock.advance(5 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.patcher.patches) != 1 {
		t.Fatalf("patches %+v at 10 s, want pool-a's roll", h.patcher.patches)
	}
	if h.version.calls != 4 {
		t.Errorf("%d reads of the sources, want 4: one a pass, and the direct re-read before the roll", h.version.calls)
	}
}

// TestUpgrade_AFailedSourceClosesATrustedGate: the gate vouches for
// v1.35.6, then one read fails (kube-system pods forbidden): that pass
// refuses, and the next, with every source back, waits again.
func TestUpgrade_AFailedSourceClosesATrustedGate(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.trustControlPlane()
	h.version.err = errors.New(`list kube-apiserver pods in kube-system: pods is forbidden`)
	doc := upgrading(9, "v1.35.6", "pool-a")
	h.exec.Execute(t.Context(), doc)
	h.version.err = nil
	h.clock.advance(5 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.patcher.patches) != 0 {
		t.Fatalf("patches %+v, want none until the version held again", h.patcher.patches)
	}
	checkTyped(t, "after the failed read", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown"}})
}

// The refusal names why no version is trusted, so the owner sees a missing
// permission in the report and not only in the log; and it reads the same
// on every pass of the same cause, so it is news, and an Event, once.
func TestUpgrade_TheUnknownControlPlaneRefusalNamesTheCauseOnce(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.err = errors.New(`list kube-apiserver pods in kube-system: pods is forbidden`)
	doc := upgrading(9, "v1.35.6", "pool-a")
	for range 3 {
		h.exec.Execute(t.Context(), doc)
		h.clock.advance(5 * time.Second)
	}
	checkTyped(t, "a source forbidden", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown|pods is forbidden"}})
	events := 0
	for _, e := range h.events.events {
		if strings.Contains(e.Message, "control plane version unknown") {
			events++
		}
	}
	if events != 1 {
		t.Errorf("%d Events for three passes of one cause, want 1: %+v", events, h.events.events)
	}

	// Readable again: the refusal says the version is waiting to hold, not
	// that it cannot be read.
	h.version.err = nil
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "every source readable, not yet stable", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown|v1.35.6 is trusted once every source agrees"}})
}
