package execute_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

func TestHeal_NotReadyWorkerPastTheWindowHasItsMachineDeleted(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)), node("node-2", "True", start.Add(-time.Hour)))

	if retry := h.exec.Execute(t.Context(), healing(4, healPolicy(1, 0))); !retry {
		t.Error("retry = false, want true: healing re-evaluates on every tick")
	}
	want := []machineDelete{{mdNamespace, "pool-a-m1", "uid-pool-a-m1", "10"}}
	if !reflect.DeepEqual(h.world.machineDeletes, want) {
		t.Fatalf("machine deletes %+v, want %+v (UID and resourceVersion preconditions)", h.world.machineDeletes, want)
	}
	if !h.world.machines["pool-a-m1"].Deleting {
		t.Error("the Machine is not deleting")
	}
	wantReports := []report{{"pool-a-m1", wire.StatusDone, 4, "deleted Machine|node-1|recreates"}}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), wantReports)
	checkTyped(t, "published", wire.ActionHeal, h.publisher.last(t).Actions, wantReports)
	if h.world.nodeGets != 1 || h.fence.Calls != 1 {
		t.Errorf("node re-reads %d, fence checks %d; want 1, 1", h.world.nodeGets, h.fence.Calls)
	}
	mem := h.exec.HealMemory
	if got := mem.LastHeal["pool-a"]; !got.Equal(start) {
		t.Errorf("last heal of pool-a = %v, want %v", got, start)
	}
	tr := mem.Tracked["pool-a-m1"]
	if tr == nil || tr.Node != "node-1" || tr.UID != "uid-pool-a-m1" || !tr.DeletedAt.Equal(start) || tr.Attempted {
		t.Errorf("tracked %+v, want node-1 deleted at start, not attempted", tr)
	}
}

// healCase is one healing pass on a fresh executor whose clock is at start.
type healCase struct {
	name        string
	mds         []*cluster.MachineDeployment
	machines    []*cluster.Machine
	nodes       []*cluster.Node
	deleteErr   map[string]error
	policy      desired.Healing
	wantDeletes []string
	wantReports []report
	// wantDetail, when set, is the exact detail of every report.
	wantDetail string
}

func cpNode(n *cluster.Node) *cluster.Node {
	n.ControlPlane = true
	return n
}

func TestHeal_Decisions(t *testing.T) {
	down := start.Add(-10 * time.Minute)
	autoscaled := poolMD("pool-auto", 2)
	autoscaled.Annotations = map[string]string{"cluster.k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}
	cpMachine := machine("cp-m1", "pool-a", "node-cp2")
	cpMachine.ControlPlane = true
	cpJoinless := joinless("cp-m2", "pool-a", time.Hour)
	cpJoinless.ControlPlane = true
	transient := apierrors.NewServiceUnavailable("etcd leader changed")

	cases := []healCase{
		{
			name:        "NotReady for less than the window is untouched",
			mds:         []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines:    []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "False", start.Add(-299*time.Second))},
			policy:      healPolicy(1, 0),
			wantReports: nil,
		},
		{
			name:        "NotReady exactly the window is healed",
			mds:         []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines:    []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "False", start.Add(-300*time.Second))},
			policy:      healPolicy(1, 0),
			wantDeletes: []string{"pool-a-m1"},
			wantReports: []report{{"pool-a-m1", wire.StatusDone, 7, "node node-1 NotReady for 5m0s|recreates"}},
		},
		{
			name:        "an Unknown node is named Unknown",
			mds:         []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines:    []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "Unknown", down)},
			policy:      healPolicy(1, 0),
			wantDeletes: []string{"pool-a-m1"},
			wantReports: []report{{"pool-a-m1", wire.StatusDone, 7, "node node-1 Unknown for 10m0s"}},
		},
		{
			name: "a joinless machine older than the startup timeout is deleted, a younger one kept",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 2)},
			machines: []*cluster.Machine{
				joinless("pool-a-m1", "pool-a", 600*time.Second),
				joinless("pool-a-m2", "pool-a", 599*time.Second),
			},
			policy:      healPolicy(1, 0),
			wantDeletes: []string{"pool-a-m1"},
			wantReports: []report{{"pool-a-m1", wire.StatusDone, 7, "no node joined|recreates"}},
		},
		{
			name: "control-plane nodes and machines are skipped silently and not counted",
			// Four replicas: the selector claims all four Machines, and a
			// Machine past spec.replicas would count as in flight.
			mds: []*cluster.MachineDeployment{poolMD("pool-a", 4)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-cp1"), cpMachine, cpJoinless,
				machine("pool-a-m3", "pool-a", "node-3"),
			},
			nodes: []*cluster.Node{
				cpNode(node("node-cp1", "False", down)), node("node-cp2", "Unknown", down),
				node("node-3", "False", down),
			},
			policy:      healPolicy(1, 0),
			wantDeletes: []string{"pool-a-m3"},
			wantReports: []report{{"pool-a-m3", wire.StatusDone, 7, "node-3"}},
		},
		{
			name:        "a pool with a cp name segment is refused",
			mds:         []*cluster.MachineDeployment{poolMD("edge-cp-pool", 1)},
			machines:    []*cluster.Machine{machine("edge-m1", "edge-cp-pool", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "False", down)},
			policy:      healPolicy(1, 0),
			wantReports: []report{{"edge-m1", wire.StatusFailed, 7, "control-plane"}},
		},
		{
			name: "storm brake: two unhealthy with a limit of 1 delete nothing",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 3)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
				machine("pool-a-m3", "pool-a", "node-3"),
			},
			nodes: []*cluster.Node{
				node("node-1", "False", down), node("node-2", "Unknown", down), node("node-3", "True", down),
			},
			policy: healPolicy(1, 0),
			wantReports: []report{
				{"pool-a-m1", wire.StatusFailed, 7, ""},
				{"pool-a-m2", wire.StatusFailed, 7, ""},
			},
			wantDetail: "unhealthy count 2 exceeds maxUnhealthy 1 — refusing (possible outage)",
		},
		{
			name:        "maxUnhealthy 0 never deletes",
			mds:         []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines:    []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "False", down)},
			policy:      healPolicy(0, 0),
			wantReports: []report{{"pool-a-m1", wire.StatusFailed, 7, ""}},
			wantDetail:  "unhealthy count 1 exceeds maxUnhealthy 0 — refusing (possible outage)",
		},
		{
			name: "G-12 an unhealthy node without a Machine counts toward the storm brake",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-1"),
			},
			nodes:       []*cluster.Node{node("node-1", "False", down), node("node-bare", "False", down)},
			policy:      healPolicy(1, 0),
			wantReports: []report{{"pool-a-m1", wire.StatusFailed, 7, ""}},
			wantDetail:  "unhealthy count 2 exceeds maxUnhealthy 1 — refusing (possible outage)",
		},
		{
			name: "one machine already deleting uses up a limit of 1",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 2)},
			machines: []*cluster.Machine{
				deleting(machine("pool-a-m0", "pool-a", "node-0")), machine("pool-a-m1", "pool-a", "node-1"),
			},
			nodes:       []*cluster.Node{node("node-0", "True", down), node("node-1", "False", down)},
			policy:      healPolicy(1, 0),
			wantReports: []report{{"pool-a-m1", wire.StatusPending, 7, "1 disruption(s) already in flight (maxUnhealthy 1)"}},
		},
		{
			name: "an autoscaler pool and an unowned machine are refused",
			mds:  []*cluster.MachineDeployment{autoscaled},
			machines: []*cluster.Machine{
				machine("auto-m1", "pool-auto", "node-1"), machine("stray-m1", "nobody", "node-2"),
			},
			nodes:  []*cluster.Node{node("node-1", "False", down), node("node-2", "False", down)},
			policy: healPolicy(2, 0),
			wantReports: []report{
				{"auto-m1", wire.StatusFailed, 7, "cluster-autoscaler|pool-auto|cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"},
				{"stray-m1", wire.StatusFailed, 7, "no owning MachineDeployment"},
			},
		},
		{
			name: "a delete failure fails and queues the next candidate",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 2)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
			},
			nodes:       []*cluster.Node{node("node-1", "False", down), node("node-2", "False", down)},
			deleteErr:   map[string]error{"pool-a-m1": transient},
			policy:      healPolicy(2, 0),
			wantDeletes: []string{"pool-a-m1"},
			wantReports: []report{
				{"pool-a-m1", wire.StatusFailed, 7, "delete failed|etcd leader changed"},
				{"pool-a-m2", wire.StatusPending, 7, "queued"},
			},
		},
		{
			name:     "an unhealthyAfter of 1800 s defers the heal",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:    []*cluster.Node{node("node-1", "False", start.Add(-1799*time.Second))},
			policy: desired.Healing{Enabled: true, MaxUnhealthy: 1, UnhealthyAfterSeconds: 1800,
				NodeStartupTimeoutSeconds: 600},
		},
		{
			name:     "a 0 s window is floored to 60 s: 30 s unhealthy is untouched",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:    []*cluster.Node{node("node-1", "False", start.Add(-30*time.Second))},
			policy:   desired.Healing{Enabled: true, MaxUnhealthy: 1},
		},
		{
			name:        "a 0 s window is floored to 60 s: 60 s unhealthy is healed",
			mds:         []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines:    []*cluster.Machine{machine("pool-a-m1", "pool-a", "node-1")},
			nodes:       []*cluster.Node{node("node-1", "False", start.Add(-60*time.Second))},
			policy:      desired.Healing{Enabled: true, MaxUnhealthy: 1},
			wantDeletes: []string{"pool-a-m1"},
			wantReports: []report{{"pool-a-m1", wire.StatusDone, 7, "unhealthyAfter 1m0s"}},
		},
		{
			name:     "a 0 s startup timeout is floored to 60 s",
			mds:      []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{joinless("pool-a-m1", "pool-a", 59*time.Second)},
			policy:   desired.Healing{Enabled: true, MaxUnhealthy: 1},
		},
		{
			name: "cooldown 0 lets two machines of one pool go back to back",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 2)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
			},
			nodes:       []*cluster.Node{node("node-1", "False", down), node("node-2", "False", down)},
			policy:      healPolicy(2, 0),
			wantDeletes: []string{"pool-a-m1", "pool-a-m2"},
			wantReports: []report{
				{"pool-a-m1", wire.StatusDone, 7, "node-1"},
				{"pool-a-m2", wire.StatusDone, 7, "node-2"},
			},
		},
		{
			name: "the default cooldown holds a new term's first heal",
			mds:  []*cluster.MachineDeployment{poolMD("pool-a", 1)},
			machines: []*cluster.Machine{
				machine("pool-a-m1", "pool-a", "node-1"),
			},
			nodes:       []*cluster.Node{node("node-1", "False", down)},
			policy:      healPolicy(1, 900),
			wantReports: []report{{"pool-a-m1", wire.StatusPending, 7, "cooldown|pool-a|" + until(start.Add(900*time.Second))}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, tc.mds...)
			h.world.add(tc.machines...)
			h.world.addNodes(tc.nodes...)
			for name, err := range tc.deleteErr {
				h.world.deleteErr[name] = err
			}
			if retry := h.exec.Execute(t.Context(), healing(7, tc.policy)); !retry {
				t.Error("retry = false, want true while healing is armed")
			}
			var deleted []string
			for _, d := range h.world.machineDeletes {
				deleted = append(deleted, d.Name)
			}
			if !reflect.DeepEqual(deleted, tc.wantDeletes) {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDeletes)
			}
			checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), tc.wantReports)
			if tc.wantDetail != "" {
				for _, a := range h.store.Snapshot() {
					if a.Detail != tc.wantDetail {
						t.Errorf("detail of %s is %q, want exactly %q", a.Target, a.Detail, tc.wantDetail)
					}
				}
			}
			if len(h.store.Snapshot()) != len(tc.wantReports) {
				t.Errorf("store holds %+v, want only the heal reports", h.store.Snapshot())
			}
		})
	}
}

func TestHeal_CooldownHoldsThePoolAndRestartsWithANewTerm(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 3))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "False", down))
	doc := healing(7, healPolicy(2, 900))
	// The term began at start: its first heal waits a full cooldown.
	h.clock.set(start.Add(15 * time.Minute))

	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "first pass", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "node-1"},
		{"pool-a-m2", wire.StatusPending, 7, "cooldown|pool-a|" + until(start.Add(30*time.Minute))},
	})

	waited := h.store.Snapshot()
	h.clock.advance(14 * time.Minute)
	h.exec.Execute(t.Context(), doc)
	// The wait reads the same 14 minutes on: no ConfigMap write, no beat.
	if got := h.store.Snapshot(); !reflect.DeepEqual(got, waited) {
		t.Errorf("after 14 minutes the reports are %+v, want them unchanged: %+v", got, waited)
	}
	if n := len(h.world.machineDeletes); n != 1 {
		t.Fatalf("%d machine deletes inside the cooldown, want 1", n)
	}

	h.clock.advance(2 * time.Minute) // 16 minutes after the first heal
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "after 16 minutes", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "node-1"},
		{"pool-a-m2", wire.StatusDone, 7, "node-2"},
	})
	if n := len(h.world.machineDeletes); n != 2 {
		t.Fatalf("%d machine deletes, want 2", n)
	}

	// Both teardowns finish; a third machine fails; a new term begins.
	delete(h.world.machines, "pool-a-m1")
	delete(h.world.machines, "pool-a-m2")
	delete(h.world.nodes, "node-1")
	delete(h.world.nodes, "node-2")
	h.world.add(machine("pool-a-m3", "pool-a", "node-3"))
	h.world.addNodes(node("node-3", "False", down))
	h.clock.advance(time.Hour)
	h.exec = h.newExecutor(t, heal.NewMemory(h.clock.now))
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 2 {
		t.Errorf("%d machine deletes, want none by the new term", n)
	}
	reports := ofType(wire.ActionHeal, h.store.Snapshot())
	last := reports[len(reports)-1]
	if last.Target != "pool-a-m3" || last.Status != wire.StatusPending || !strings.Contains(last.Detail, "cooldown") ||
		!strings.Contains(last.Detail, until(h.clock.now.Add(15*time.Minute))) {
		t.Errorf("new term reported %+v, want pool-a-m3 pending a full 15m0s cooldown", last)
	}
}

func TestHeal_NeedsBothBits(t *testing.T) {
	armedHalves := map[string]desired.Document{
		"authorized, policy disabled": {Revision: 7, Execution: desired.Execution{Healing: true},
			Healing: desired.Healing{MaxUnhealthy: 1, CooldownSeconds: 0}},
		"policy enabled, not authorized": {Revision: 7, Healing: healPolicy(1, 0)},
	}
	for name, half := range armedHalves {
		for _, scalingOn := range []bool{false, true} {
			t.Run(name+map[bool]string{false: ", nothing else on", true: ", scaling on"}[scalingOn], func(t *testing.T) {
				doc := half
				h := newHealHarness(t, poolMD("pool-a", 1))
				h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
				h.world.addNodes(node("node-1", "False", start.Add(-time.Hour)))
				if scalingOn {
					doc.Execution.Scaling = true
					doc.WorkerPools = []desired.Pool{pool("pool-a", 1)}
				}
				if retry := h.exec.Execute(t.Context(), doc); retry {
					t.Error("retry = true, want false")
				}
				if got := ofType(wire.ActionHeal, h.store.Snapshot()); got != nil {
					t.Errorf("heal reports %+v, want none", got)
				}
				calls := h.world.calls()
				if !scalingOn {
					for what, n := range calls {
						if n != 0 {
							t.Errorf("%s called %d times, want 0", what, n)
						}
					}
				}
				if calls["machineEnsure"] != 0 || calls["nodeEnsure"] != 0 || calls["machineDelete"] != 0 {
					t.Errorf("calls %v, want no Machine or Node Ensure and no delete", calls)
				}
				if h.world.machineStops == 0 || h.world.nodeStops == 0 {
					t.Errorf("Machine cache stops %d, Node cache stops %d; want both stopped", h.world.machineStops, h.world.nodeStops)
				}
			})
		}
	}
}

func TestHeal_RecoveredNodeLosesItsPendingReportAndDoneReportsStay(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "False", down))
	h.clock.set(start.Add(15 * time.Minute))
	doc := healing(7, healPolicy(2, 900))

	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "first pass", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "node-1"},
		{"pool-a-m2", wire.StatusPending, 7, "cooldown"},
	})

	h.world.addNodes(node("node-2", "True", h.clock.now))
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	want := []report{{"pool-a-m1", wire.StatusDone, 7, "node-1|recreates"}}
	checkTyped(t, "after node-2 recovered", wire.ActionHeal, h.store.Snapshot(), want)
	checkTyped(t, "published", wire.ActionHeal, h.publisher.last(t).Actions, want)
}

// oneDeadWorker is pool-a's one Machine, its node-1 NotReady for 10 minutes.
func oneDeadWorker(t *testing.T) *healHarness {
	t.Helper()
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	return h
}

// A decision made on the cache is made again on a direct List before any
// delete, and a List that no longer shows the node unhealthy deletes
// nothing and says why.
func TestHeal_AFreshListOverridesAStaleCache(t *testing.T) {
	cases := map[string]map[string]*cluster.Node{
		"the node is Ready again":         {"node-1": node("node-1", "True", start)},
		"the node flapped since the read": {"node-1": node("node-1", "False", start.Add(-time.Minute))},
		"the node is gone":                {},
	}
	for name, live := range cases {
		t.Run(name, func(t *testing.T) {
			h := oneDeadWorker(t)
			h.world.liveNodes = live

			h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
			if len(h.world.machineDeletes) != 0 || h.fence.Calls != 0 {
				t.Errorf("deletes %+v, fence checks %d; want none", h.world.machineDeletes, h.fence.Calls)
			}
			// Decided again on the direct List, the machine is no candidate.
			if got := h.store.Snapshot(); got != nil || h.world.freshLists == 0 {
				t.Errorf("reports %+v after %d direct Lists; want none after at least one", got, h.world.freshLists)
			}
			if mem := h.exec.HealMemory; len(mem.LastHeal) != 0 || len(mem.Tracked) != 0 {
				t.Errorf("memory changed: last heals %v, tracked %v", mem.LastHeal, mem.Tracked)
			}
			if n := h.logs.Count("A fresh read changed the heal decision", `"cached":["pool-a-m1"]`); n != 1 {
				t.Errorf("%d log lines saying the fresh read changed the decision, want 1", n)
			}
		})
	}
}

// The node is read once more just before its Machine's delete, after the
// direct List: one that came back in between keeps its Machine, reported
// pending for the next pass to decide again.
func TestHeal_ANodeThatCameBackAfterTheListKeepsItsMachine(t *testing.T) {
	for name, got := range map[string]map[string]*cluster.Node{
		"Ready again":        {"node-1": node("node-1", "True", start)},
		"flapped since":      {"node-1": node("node-1", "False", start.Add(-time.Minute))},
		"control: unchanged": nil,
	} {
		t.Run(name, func(t *testing.T) {
			h := oneDeadWorker(t)
			h.world.gotNodes = got

			h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
			if got == nil {
				if len(h.world.machineDeletes) != 1 {
					t.Errorf("deletes %+v, want pool-a-m1's", h.world.machineDeletes)
				}
				return
			}
			if len(h.world.machineDeletes) != 0 || h.world.nodeGets == 0 {
				t.Errorf("deletes %+v after %d node reads; want none after one", h.world.machineDeletes, h.world.nodeGets)
			}
			checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{
				{"pool-a-m1", wire.StatusPending, 7, "recovered or changed since it was read"},
			})
		})
	}
}

func TestHeal_MachineChangedSinceTheReadIsNotDeleted(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.liveRV["pool-a-m1"] = "12" // the cache still holds 10

	h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
	if h.world.machines["pool-a-m1"].Deleting {
		t.Error("a Machine changed since the read was deleted")
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusPending, 7, "stale read"}})
	if mem := h.exec.HealMemory; len(mem.LastHeal) != 0 || len(mem.Tracked) != 0 {
		t.Errorf("memory changed: last heals %v, tracked %v", mem.LastHeal, mem.Tracked)
	}
}

// refusedHarness has one unhealthy worker, pool-a-m1, whose delete the
// apiserver refuses as Forbidden, saying why.
func refusedHarness(t *testing.T, why string) *healHarness {
	t.Helper()
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.deleteErr["pool-a-m1"] = apierrors.NewForbidden(machineResource, "pool-a-m1", errors.New(why))
	return h
}

func TestHeal_ForbiddenMachineDeleteFailsWhileScalingKeepsWorking(t *testing.T) {
	h := refusedHarness(t, "no delete verb")
	doc := healing(7, healPolicy(1, 0))
	doc.Execution.Scaling = true
	doc.WorkerPools = []desired.Pool{pool("pool-a", 3)}

	if retry := h.exec.Execute(t.Context(), doc); !retry {
		t.Error("retry = false, want true")
	}
	wantPatch := []patch{{mdNamespace, "pool-a", `{"metadata":{"resourceVersion":"5"},"spec":{"replicas":3}}`}}
	if !reflect.DeepEqual(h.patcher.patches, wantPatch) {
		t.Errorf("patches %+v, want %+v", h.patcher.patches, wantPatch)
	}
	checkTyped(t, "scale", wire.ActionScale, h.store.Snapshot(), []report{{"pool-a", wire.StatusDone, 7, "replicas 2 to 3"}})
	checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusFailed, 7, "delete failed|forbidden|RBAC|delete on machines"},
	})
	if len(h.exec.HealMemory.Tracked) != 0 || len(h.exec.HealMemory.LastHeal) != 0 {
		t.Error("a forbidden delete was remembered as a heal")
	}
}

func TestHeal_FailedReadSkipsThePassWithoutReportingOrPruning(t *testing.T) {
	for _, which := range []string{"Machines", "Nodes"} {
		t.Run(which, func(t *testing.T) {
			h := newHealHarness(t, poolMD("pool-a", 1))
			h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
			h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
			doc := healing(7, healPolicy(1, 900))
			h.exec.Execute(t.Context(), doc)
			want := []report{{"pool-a-m1", wire.StatusPending, 7, "cooldown"}}
			checkTyped(t, "first pass", wire.ActionHeal, h.store.Snapshot(), want)

			// node-1 recovers, but the pass cannot read the cluster.
			h.world.addNodes(node("node-1", "True", start))
			readErr := apierrors.NewServiceUnavailable("etcd leader changed")
			if which == "Machines" {
				h.world.machineEnsureErr = readErr
			} else {
				h.world.nodeEnsureErr = readErr
			}
			h.clock.advance(time.Hour)
			if retry := h.exec.Execute(t.Context(), doc); !retry {
				t.Error("retry = false, want true")
			}
			checkTyped(t, "failed read", wire.ActionHeal, h.store.Snapshot(), want)
			if len(h.world.machineDeletes) != 0 {
				t.Errorf("machine deletes %+v, want none", h.world.machineDeletes)
			}
		})
	}
}

// docs/contract.md#g-3: a heal outcome reaches the wire even after 20 older
// scale reports.
func TestHeal_NewestOutcomeIsPublishedPastTwentyOlderReports(t *testing.T) {
	var mds []*cluster.MachineDeployment
	var pools []desired.Pool
	for _, name := range []string{"p00", "p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09",
		"p10", "p11", "p12", "p13", "p14", "p15", "p16", "p17", "p18", "p19"} {
		mds = append(mds, poolMD(name, 1))
		pools = append(pools, pool(name, 1))
	}
	h := newHealHarness(t, mds...)
	h.world.add(machine("p00-m1", "p00", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	doc := healing(7, healPolicy(1, 0))
	doc.Execution.Scaling = true
	doc.WorkerPools = pools

	h.exec.Execute(t.Context(), doc)
	if n := len(h.store.Snapshot()); n != 21 {
		t.Fatalf("store holds %d reports, want 21", n)
	}
	published := h.publisher.last(t).Actions
	if len(published) != 20 {
		t.Fatalf("published %d reports, want 20", len(published))
	}
	checkTyped(t, "published", wire.ActionHeal, published, []report{{"p00-m1", wire.StatusDone, 7, "recreates"}})
}

// The fence is consulted before every delete: without the lease no Machine
// and no pod delete reaches the apiserver.
func TestHeal_LostLeaseSendsNoDelete(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "True", down))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1"), stuckPod("apps", "web-1", "node-1")}
	doc := healing(7, healPolicy(2, 0))

	h.fence.Err = errLostLease
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 0 || h.fence.Calls != 1 {
		t.Fatalf("machine deletes %+v, fence checks %d; want none sent, 1 check", h.world.machineDeletes, h.fence.Calls)
	}
	checkTyped(t, "lost lease", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusFailed, 7, "lost lease"}})
	if len(h.exec.HealMemory.Tracked) != 0 {
		t.Error("a refused delete was tracked")
	}

	// With the lease the Machine goes; then the lease is lost again before
	// the unwedge is due, and node-2 fails too.
	h.fence.Err = nil
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 {
		t.Fatalf("machine deletes %+v, want pool-a-m1", h.world.machineDeletes)
	}
	h.fence.Err = errLostLease
	h.world.addNodes(node("node-2", "False", h.clock.now))
	h.clock.advance(time.Hour)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 || len(h.world.podDeletes) != 0 {
		t.Errorf("machine deletes %+v, pod deletes %+v; want nothing more without the lease", h.world.machineDeletes, h.world.podDeletes)
	}
}

// A delete the write fence refuses was never sent. Unlike a delete the
// apiserver refuses, it must not hold the Machine or start the pool's
// cooldown: one Lease read that timed out would otherwise keep a dead
// worker for a whole cooldown (here 900 s).
func TestHeal_AFenceRefusalHoldsNothingForTheCooldown(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "True", down))
	h.clock.set(start.Add(15 * time.Minute)) // past the new term's cooldown
	doc := healing(7, healPolicy(1, 900))

	h.fence.Err = errLostLease
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 0 {
		t.Fatalf("machine deletes %+v with the fence refusing; want none", h.world.machineDeletes)
	}
	checkTyped(t, "fence refused", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusFailed, 7, "lost lease"}})

	h.fence.Err = nil
	h.clock.advance(30 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 {
		t.Fatalf("machine deletes %+v 30 s after the fence recovered; want pool-a-m1", h.world.machineDeletes)
	}
	checkTyped(t, "fence recovered", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, "recreates"}})
}

// A Machine cache a moment behind the delete must not make the deleted
// machine a candidate again: its done report stays for the revision.
func TestHeal_LaggingMachineCacheKeepsTheDoneReport(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.clock.set(start.Add(15 * time.Minute))
	doc := healing(7, healPolicy(1, 900))
	h.exec.Execute(t.Context(), doc)
	h.world.machines["pool-a-m1"].Deleting = false // the cache has not seen the delete yet
	h.clock.advance(30 * time.Second)
	h.exec.Execute(t.Context(), doc)
	h.world.machines["pool-a-m1"].Deleting = true
	h.clock.advance(30 * time.Second)
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "after the lag", wire.ActionHeal, h.store.Snapshot(), []report{{"pool-a-m1", wire.StatusDone, 7, "recreates"}})
	if len(h.world.machineDeletes) != 1 {
		t.Errorf("machine deletes %+v, want exactly the first", h.world.machineDeletes)
	}
}

// A machine its selector places in a worker pool but whose MachineSet owner
// names a control-plane pool could be either: it is treated as unowned and
// never deleted. So is a machine of a pool the document does not name.
func TestHeal_AmbiguouslyOwnedOrUnnamedMachinesAreRefused(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2), poolMD("prod-cp", 1), poolMD("unnamed", 1))
	m1 := machine("pool-a-m1", "pool-a", "node-1")
	m1.MachineSets = []string{"prod-cp-5c4b"}
	h.world.add(m1, machine("unnamed-m1", "unnamed", "node-2"))
	down := start.Add(-10 * time.Minute)
	h.world.addNodes(node("node-1", "False", down), node("node-2", "False", down))
	h.exec.Execute(t.Context(), healing(4, healPolicy(2, 0)))
	if len(h.world.machineDeletes) != 0 {
		t.Fatalf("machine deletes %+v, want none", h.world.machineDeletes)
	}
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusFailed, 4, "no owning MachineDeployment"},
		{"unnamed-m1", wire.StatusFailed, 4, "not among the desired state's workerPools"},
	})
}

// Every heal delete and unwedge is also an Event on its Machine, and a roll's
// start an Event on its MachineDeployment, so `kubectl describe` says what
// the agent did and why; a refusal repeated on the next pass is not news.
func TestEvents_HealAndUpgradeActsAreRecordedOnTheirObjects(t *testing.T) {
	h, doc := healedWithStuckPods(t)
	h.clock.advance(300 * time.Second)
	h.exec.Execute(t.Context(), doc)
	var reasons []string
	for _, ev := range h.events.events {
		reasons = append(reasons, ev.MD+" "+ev.Reason)
	}
	want := []string{mdNamespace + "/pool-a-m1 KubehzHealed", mdNamespace + "/pool-a-m1 KubehzUnwedged"}
	if !reflect.DeepEqual(reasons, want) {
		t.Errorf("events %v, want %v", reasons, want)
	}

	r := rollingHarness(t)
	r.exec.Execute(t.Context(), upgrading(9, "v1.35.6", "pool-a"))
	if n := len(r.events.events); n != 1 || r.events.events[0].Reason != "KubehzUpgrading" || r.events.events[0].MD != mdNamespace+"/pool-a" {
		t.Errorf("roll events %+v, want one KubehzUpgrading on pool-a", r.events.events)
	}
	refuse := upgrading(10, "v1.30.0", "pool-a") // a downgrade, refused
	r.exec.Execute(t.Context(), refuse)
	r.exec.Execute(t.Context(), refuse)
	refused := 0
	for _, ev := range r.events.events {
		if ev.Reason == "KubehzRefused" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d KubehzRefused events over two identical passes, want 1", refused)
	}
}

// The storm brake counts on a direct List, never on the cache alone: a
// cache that missed an outage (a broken watch) shows one dead worker, the
// apiserver three, and nothing is deleted.
func TestHeal_StormIsCountedOnAFreshReadNotTheCache(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 3))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"), machine("pool-a-m3", "pool-a", "node-3"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "True", down), node("node-3", "True", down))
	h.world.liveNodes = map[string]*cluster.Node{
		"node-1": node("node-1", "False", down), "node-2": node("node-2", "Unknown", down), "node-3": node("node-3", "Unknown", down),
	}
	h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
	if len(h.world.machineDeletes) != 0 {
		t.Fatalf("machine deletes %+v in a storm the cache missed", h.world.machineDeletes)
	}
	const storm = "unhealthy count 3 exceeds maxUnhealthy 1 — refusing (possible outage)"
	checkTyped(t, "store", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusFailed, 7, storm}, {"pool-a-m2", wire.StatusFailed, 7, storm}, {"pool-a-m3", wire.StatusFailed, 7, storm},
	})
}

// A direct List that fails defers the delete: nothing is deleted on the
// cache alone.
func TestHeal_NoDeleteWithoutAFreshRead(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.freshErr = errors.New("etcd leader changed")
	h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
	if len(h.world.machineDeletes) != 0 || h.fence.Calls != 0 {
		t.Fatalf("deletes %+v, fence checks %d without a fresh read", h.world.machineDeletes, h.fence.Calls)
	}
	h.world.freshErr = nil
	h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
	if len(h.world.machineDeletes) != 1 {
		t.Errorf("deletes %+v once the fresh read works, want 1", h.world.machineDeletes)
	}
}

// A refusal reads the same on every pass while the outage lasts: no new
// report for the beat, and one Event, not one per tick.
func TestHeal_ARepeatedRefusalIsNotNews(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("orphan-m1", "", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	doc := healing(4, healPolicy(1, 0))
	h.exec.Execute(t.Context(), doc)
	first := h.store.Snapshot()
	for range 3 {
		h.clock.advance(time.Minute)
		h.exec.Execute(t.Context(), doc)
	}
	if got := h.store.Snapshot(); !reflect.DeepEqual(got, first) {
		t.Errorf("the refusal changed between passes:\n%+v\n%+v", first, got)
	}
	if n := len(h.events.events); n != 1 {
		t.Errorf("%d Events over 4 passes, want 1", n)
	}
}

// afterAnUnansweredDelete is a pass in which pool-a-m1's node-1 is long
// dead and its delete is answered with a timeout; node-2 is in state node2.
func afterAnUnansweredDelete(t *testing.T, node2 string) (*healHarness, desired.Document) {
	t.Helper()
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	down := start.Add(-10 * time.Minute)
	h.world.addNodes(node("node-1", "False", down), node("node-2", node2, down))
	h.world.deleteErr["pool-a-m1"] = apierrors.NewServerTimeout(machineResource, "delete", 1)
	doc := healing(7, healPolicy(2, 900))
	h.clock.set(start.Add(16 * time.Minute))
	h.exec.Execute(t.Context(), doc)
	return h, doc
}

// A delete whose answer never came (a timeout, a 5xx) may have landed: the
// pool's cooldown starts, but the machine is not followed for the unwedge,
// since this term could not tell its own delete from someone else's.
func TestHeal_AnUnansweredDeleteStartsTheCooldown(t *testing.T) {
	h, doc := afterAnUnansweredDelete(t, "False")
	mem := h.exec.HealMemory
	if _, ok := mem.LastHeal["pool-a"]; !ok {
		t.Fatal("no cooldown started for pool-a")
	}
	if _, ok := mem.Tracked["pool-a-m1"]; ok {
		t.Error("an unanswered delete is followed for the unwedge")
	}
	delete(h.world.deleteErr, "pool-a-m1")
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 {
		t.Errorf("machine deletes %+v: the cooldown did not hold pool-a", h.world.machineDeletes)
	}
}

// A delete whose answer was lost, and which did land, ends reported done
// once a read shows the Machine deleting: it is reported failed when the
// answer is lost, and, no longer a candidate, would otherwise be withdrawn
// without the platform ever seeing the heal done.
func TestHeal_AnUnansweredDeleteThatLandedIsReportedDone(t *testing.T) {
	h, doc := afterAnUnansweredDelete(t, "True")
	checkTyped(t, "after the lost answer", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusFailed, 7, "delete failed"},
	})

	h.world.machines["pool-a-m1"].Deleting = true // it had landed
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "once a read shows it deleting", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "answer was lost"},
	})
	if _, ok := h.exec.HealMemory.Tracked["pool-a-m1"]; ok {
		t.Error("a delete this term cannot tell from another's is followed for the unwedge")
	}
}

// A delete whose answer was lost, and which did not land, is decided again
// like any other candidate: held by the cooldown the lost delete started,
// then deleted once it has passed.
func TestHeal_AnUnansweredDeleteThatDidNotLandIsDecidedAgain(t *testing.T) {
	h, doc := afterAnUnansweredDelete(t, "True")
	delete(h.world.deleteErr, "pool-a-m1")
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "within the cooldown", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusPending, 7, "cooldown"},
	})
	if _, ok := h.exec.HealMemory.Unsure["pool-a-m1"]; ok {
		t.Error("a Machine a read shows live and not deleting is still awaiting its lost answer")
	}

	h.clock.advance(15 * time.Minute) // past the 900 s cooldown
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "after the cooldown", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "recreates"},
	})
}

// A slow apiserver makes a pass long: the cooldown and the eviction timeout
// run from when the Machine delete returned, never from when the pass
// began, or they would run short by the length of the pass.
func TestHeal_CooldownRunsFromWhenTheDeleteReturnedNotFromThePassStart(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "False", down))
	h.world.slow = func() { h.clock.advance(40 * time.Second) } // every delete takes 40 s
	doc := healing(7, healPolicy(2, 900))
	pass := start.Add(16 * time.Minute) // past the term's own cooldown
	h.clock.set(pass)

	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 {
		t.Fatalf("first pass: machine deletes %+v, want pool-a-m1 only", h.world.machineDeletes)
	}
	returned := pass.Add(40 * time.Second)
	if got := h.exec.HealMemory.LastHeal["pool-a"]; !got.Equal(returned) {
		t.Errorf("pool-a's last heal = %s, want %s: when the delete returned", got, returned)
	}

	// 900 s after the pass began, but 40 s short of 900 s after the delete.
	h.clock.set(pass.Add(900 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 1 {
		t.Fatalf("%d machine deletes 860 s after the first delete returned, want the 900 s cooldown to hold", n)
	}
	checkTyped(t, "860 s after", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "node-1"},
		{"pool-a-m2", wire.StatusPending, 7, "cooldown|" + until(returned.Add(900*time.Second))},
	})

	h.clock.set(returned.Add(900 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 2 {
		t.Errorf("%d machine deletes 900 s after the first returned, want the second", n)
	}
}

// machine-controller writes a Machine's status.nodeRef some time after the
// Node joined; until then the Node names its Machine by machine-controller's
// own marks. A Machine past its startup window whose Node has joined and is
// Ready is a working server behind a lagging controller, not a machine
// that never joined: it is reported, never deleted.
func TestHeal_JoinlessMachineWhoseNodeIsReadyIsNotDeleted(t *testing.T) {
	down := start.Add(-10 * time.Minute)
	cases := []struct {
		name        string
		node        *cluster.Node
		wantDeletes int
		want        report
	}{
		{
			name: "a control: no Node of its own, so it never joined and is replaced",
			node: node("somebody-else", "True", down), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "no node joined|recreates"},
		},
		{
			name: "its Node carries its name",
			node: node("pool-a-m1", "True", down),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1|Ready|machine-controller"},
		},
		{
			name: "its Node carries its UID in machine-controller/owned-by",
			node: marked(node("hz-4711", "True", down), "uid-pool-a-m1", ""),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|hz-4711|Ready|owned-by"},
		},
		{
			name: "its Node carries its namespace/name in cluster.k8s.io/machine",
			node: marked(node("hz-4711", "True", down), "", mdNamespace+"/pool-a-m1"),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|hz-4711|Ready|cluster.k8s.io/machine"},
		},
		{
			name: "a control: marks naming another Machine tie nothing to it",
			node: marked(node("hz-4711", "True", down), "uid-pool-a-m9", "other-ns/pool-a-m1"), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "no node joined|recreates"},
		},
		{
			name: "a Node named after it that has no Ready condition yet is still joining",
			node: node("pool-a-m1", "", time.Time{}),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1"},
		},
		{
			name: "a Node named after it NotReady for less than unhealthyAfter",
			node: node("pool-a-m1", "False", start.Add(-299*time.Second)),
			want: report{"pool-a-m1", wire.StatusPending, 7, "status.nodeRef|pool-a-m1|NotReady"},
		},
		{
			name: "a Node named after it and down for unhealthyAfter is judged as its node",
			node: node("pool-a-m1", "Unknown", start.Add(-300*time.Second)), wantDeletes: 1,
			want: report{"pool-a-m1", wire.StatusDone, 7, "node pool-a-m1 Unknown for 5m0s|recreates"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, poolMD("pool-a", 1))
			h.world.add(joinless("pool-a-m1", "pool-a", time.Hour))
			h.world.addNodes(tc.node)
			h.exec.Execute(t.Context(), healing(7, healPolicy(1, 0)))
			if n := len(h.world.machineDeletes); n != tc.wantDeletes {
				t.Errorf("%d machine deletes %+v, want %d", n, h.world.machineDeletes, tc.wantDeletes)
			}
			checkTyped(t, tc.name, wire.ActionHeal, h.store.Snapshot(), []report{tc.want})
		})
	}
}

// marked is n bearing machine-controller's marks: uid in the owned-by
// label, machine ("namespace/name") in the machine annotation.
func marked(n *cluster.Node, uid types.UID, machine string) *cluster.Node {
	n.OwnerUID, n.OwnerMachine = uid, machine
	return n
}

// docs/contract.md#acting-gate: machine-controller marks the Machines a
// scale-down removes only once the patch reaches it, so healing in the same
// pass counts the removed count as in flight, unless the apiserver refused
// the patch; a scale-up removes nothing. From a replica count that could not
// be read, the count is every live Machine of the pool past the new one.
func TestHeal_AScaleDownSentInTheSamePassCountsAsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name         string
		replicas     int
		maxUnhealthy int
		patchErr     error
		wantDelete   bool
		wantReport   report
		unread       bool // pool-a's spec.replicas could not be read
	}{
		{"from an unread count, a scale-down to 2 of 3 live uses a budget of 1", 2, 1, nil, false,
			report{"pool-a-m1", wire.StatusPending, 7, "1 disruption(s) already in flight (maxUnhealthy 1)"}, true},
		{"from an unread count, a scale-down to 1 of 3 live uses a budget of 2", 1, 2, nil, false,
			report{"pool-a-m1", wire.StatusPending, 7, "2 disruption(s) already in flight (maxUnhealthy 2)"}, true},
		{"from an unread count, a scale to the 3 live removes nothing", 3, 1, nil, true,
			report{"pool-a-m1", wire.StatusDone, 7, "deleted Machine"}, true},
		{"a scale-down of 1 uses a budget of 1", 2, 1, nil, false,
			report{"pool-a-m1", wire.StatusPending, 7, "1 disruption(s) already in flight (maxUnhealthy 1)"}, false},
		{"a scale-down of 1 leaves 1 of a budget of 2", 2, 2, nil, true,
			report{"pool-a-m1", wire.StatusDone, 7, "deleted Machine"}, false},
		{"a scale-down of 2 uses a budget of 2", 1, 2, nil, false,
			report{"pool-a-m1", wire.StatusPending, 7, "2 disruption(s) already in flight (maxUnhealthy 2)"}, false},
		{"a scale-down the apiserver refused removes nothing", 2, 1,
			apierrors.NewForbidden(schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}, "pool-a", errors.New("denied")), true,
			report{"pool-a-m1", wire.StatusDone, 7, "deleted Machine"}, false},
		{"a scale-down that timed out may have landed", 2, 1, context.DeadlineExceeded, false,
			report{"pool-a-m1", wire.StatusPending, 7, "1 disruption(s) already in flight"}, false},
		{"a scale-up removes nothing", 4, 1, nil, true,
			report{"pool-a-m1", wire.StatusDone, 7, "deleted Machine"}, false},
		// Without the lease nothing is sent, the delete neither: the heal
		// is refused for the lease, not held for a scale-down.
		{"a scale-down the fence held back removes nothing", 2, 1, errLostLease, false,
			report{"pool-a-m1", wire.StatusFailed, 7, "lost lease"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := poolMD("pool-a", 3)
			if tc.unread {
				md.Replicas = nil
			}
			h := newHealHarness(t, md)
			h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
				machine("pool-a-m3", "pool-a", "node-3"))
			h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)), node("node-2", "True", start.Add(-time.Hour)),
				node("node-3", "True", start.Add(-time.Hour)))
			wantPatches := 1
			switch {
			case errors.Is(tc.patchErr, errLostLease):
				h.fence.Err, wantPatches = tc.patchErr, 0
			case tc.patchErr != nil:
				h.patcher.err["pool-a"] = tc.patchErr
			}
			doc := healing(7, healPolicy(tc.maxUnhealthy, 0))
			doc.Execution.Scaling = true
			doc.WorkerPools = []desired.Pool{pool("pool-a", tc.replicas)}

			h.exec.Execute(t.Context(), doc)
			if len(h.patcher.patches) != wantPatches {
				t.Fatalf("patches %+v, want %d", h.patcher.patches, wantPatches)
			}
			if deleted := len(h.world.machineDeletes) == 1; deleted != tc.wantDelete || len(h.world.machineDeletes) > 1 {
				t.Errorf("machine deletes %+v; want a delete of pool-a-m1: %v", h.world.machineDeletes, tc.wantDelete)
			}
			checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{tc.wantReport})
		})
	}
}

// A scale-down takes down every live Machine past its new count, not just
// the drop in spec.replicas: with spec.replicas 3 and 4 live Machines (a
// controller behind, a roll's surge), a patch to 2 takes 2 down and uses
// the whole budget of 2. Counting the drop of 1 let the same pass heal.
func TestHeal_AScaleDownCountsEveryLiveMachinePastItsNewCount(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 3))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
		machine("pool-a-m3", "pool-a", "node-3"), machine("pool-a-m4", "pool-a", "node-4"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)), node("node-2", "True", start.Add(-time.Hour)),
		node("node-3", "True", start.Add(-time.Hour)), node("node-4", "True", start.Add(-time.Hour)))
	doc := healing(7, healPolicy(2, 0))
	doc.Execution.Scaling = true
	doc.WorkerPools = []desired.Pool{pool("pool-a", 2)}

	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 0 {
		t.Errorf("machine deletes %+v beside a scale-down that takes the whole budget", h.world.machineDeletes)
	}
	checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusPending, 7, "2 disruption(s) already in flight (maxUnhealthy 2)"},
	})
}

// A Machine past its pool's spec.replicas is one machine-controller has yet
// to take down: a scale-down of an earlier pass it lags behind, someone
// else's, a roll's surge. It counts as in flight in every pass until the
// controller marks it deleting, not only in the pass that lowered the count;
// then it counts once, as deleting. A heal in that same pool gets no
// discount: a MachineSet not yet lowered, or a roll's new one, would
// recreate the Machine it deletes.
func TestHeal_MachinesPastTheirPoolsCountAreInFlightUntilMarked(t *testing.T) {
	for _, tc := range []struct {
		name         string
		replicasA    int64 // pool-a has 3 live Machines, node-1's NotReady
		replicasB    int64 // pool-b has 2 Machines, both Ready
		deletingB    bool  // pool-b-m2 is already deleting
		overlap      bool  // pool-a's MachineSet owns pool-a-m4, which pool-b's selector matches
		maxUnhealthy int
		scaleTo      map[string]int // this pass's scale patches
		patchErr     error          // what each of them answers
		wantDelete   bool
		wantInFlight string
	}{
		{name: "control: every pool at its count heals", replicasA: 3, replicasB: 2, maxUnhealthy: 1, wantDelete: true},
		{name: "one past another pool's count uses a budget of 1", replicasA: 3, replicasB: 1, maxUnhealthy: 1,
			wantInFlight: "1 disruption(s) already in flight (maxUnhealthy 1)"},
		{name: "one past another pool's count leaves 1 of a budget of 2", replicasA: 3, replicasB: 1, maxUnhealthy: 2,
			wantDelete: true},
		{name: "one past the dead worker's own pool's count uses a budget of 1", replicasA: 2, replicasB: 2,
			maxUnhealthy: 1, wantInFlight: "1 disruption(s) already in flight (maxUnhealthy 1)"},
		{name: "one past its own pool's and one past another's overdraw a budget of 1", replicasA: 2, replicasB: 1,
			maxUnhealthy: 1, wantInFlight: "2 disruption(s) already in flight (maxUnhealthy 1)"},
		{name: "one past its own pool's and one past another's use a budget of 2", replicasA: 2, replicasB: 1,
			maxUnhealthy: 2, wantInFlight: "2 disruption(s) already in flight (maxUnhealthy 2)"},
		{name: "one past its own pool's and one past another's leave 1 of a budget of 3", replicasA: 2, replicasB: 1,
			maxUnhealthy: 3, wantDelete: true},
		// machine-controller counts a Machine under its MachineSet: pool-a
		// has 4 Machines, pool-b's selector matches one of them but has 2.
		{name: "a Machine counts for the pool whose MachineSet owns it", replicasA: 3, replicasB: 2, overlap: true,
			maxUnhealthy: 1, wantInFlight: "1 disruption(s) already in flight (maxUnhealthy 1)"},
		{name: "a Machine counts for the pool whose MachineSet owns it alone", replicasA: 4, replicasB: 2, overlap: true,
			maxUnhealthy: 1, wantDelete: true},
		// pool-b's deleting Machine counts as deleting, and not again as
		// one past the count: 1 in flight, not 2.
		{name: "once marked deleting it counts once", replicasA: 3, replicasB: 1, deletingB: true, maxUnhealthy: 2,
			wantDelete: true},
		{name: "once marked deleting it still counts", replicasA: 3, replicasB: 1, deletingB: true, maxUnhealthy: 1,
			wantInFlight: "1 disruption(s) already in flight (maxUnhealthy 1)"},
		// pool-b read at 1 after this pass's patch to 1 from 2: the one
		// Machine the patch removes is counted once, not once for the patch
		// and once more for the count the read shows.
		{name: "a pool this pass scales down counts once", replicasA: 3, replicasB: 2, maxUnhealthy: 2,
			scaleTo: map[string]int{"pool-b": 1}, wantDelete: true},
		// The patch to 2 timed out: it may have landed, and it may not.
		{name: "a scale-up that may not have landed leaves the Machine past the count read", replicasA: 3, replicasB: 1,
			maxUnhealthy: 1, scaleTo: map[string]int{"pool-b": 2}, patchErr: context.DeadlineExceeded,
			wantInFlight: "1 disruption(s) already in flight (maxUnhealthy 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealHarness(t, poolMD("pool-a", tc.replicasA), poolMD("pool-b", tc.replicasB))
			b2 := machine("pool-b-m2", "pool-b", "node-5")
			if tc.deletingB {
				b2 = deleting(b2)
			}
			h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"),
				machine("pool-a-m3", "pool-a", "node-3"), machine("pool-b-m1", "pool-b", "node-4"), b2)
			if tc.overlap {
				m4 := machine("pool-a-m4", "pool-b", "node-6")
				m4.MachineSets = []string{"pool-a-6d8f9b7c4"}
				h.world.add(m4)
				h.world.addNodes(node("node-6", "True", start.Add(-time.Hour)))
			}
			h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
			for _, n := range []string{"node-2", "node-3", "node-4", "node-5"} {
				h.world.addNodes(node(n, "True", start.Add(-time.Hour)))
			}
			doc := healing(7, healPolicy(tc.maxUnhealthy, 0))
			if len(tc.scaleTo) > 0 {
				doc.Execution.Scaling = true
				doc.WorkerPools = nil
				for _, name := range []string{"pool-a", "pool-b"} {
					n, ok := tc.scaleTo[name]
					if !ok {
						n = 3 // pool-a's count: no patch
					}
					doc.WorkerPools = append(doc.WorkerPools, pool(name, n))
					h.patcher.err[name] = tc.patchErr
				}
			}

			h.exec.Execute(t.Context(), doc)
			if len(h.patcher.patches) != len(tc.scaleTo) {
				t.Fatalf("patches %+v, want %d", h.patcher.patches, len(tc.scaleTo))
			}
			want := report{"pool-a-m1", wire.StatusDone, 7, "deleted Machine"}
			if !tc.wantDelete {
				want = report{"pool-a-m1", wire.StatusPending, 7, tc.wantInFlight}
			}
			if deleted := len(h.world.machineDeletes) == 1; deleted != tc.wantDelete || len(h.world.machineDeletes) > 1 {
				t.Errorf("machine deletes %+v; want a delete of pool-a-m1: %v", h.world.machineDeletes, tc.wantDelete)
			}
			checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{want})
		})
	}
}

// docs/contract.md#acting-gate: healing, like scaling and upgrades, takes
// the first 100 of the document's pools by name; a dead worker of a pool
// past them is refused, while one of a pool within them is healed.
func TestHeal_APoolPastTheFirstHundredByNameIsNotHealed(t *testing.T) {
	h := newHealHarness(t, poolMD("p050", 1), poolMD("p130", 1))
	h.world.add(machine("p050-m1", "p050", "node-1"), machine("p130-m1", "p130", "node-2"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)), node("node-2", "False", start.Add(-10*time.Minute)))
	doc := healing(7, healPolicy(5, 0))
	doc.WorkerPools = nil
	for i := 149; i >= 0; i-- { // the document's order is not the cut's
		doc.WorkerPools = append(doc.WorkerPools, desired.Pool{Name: fmt.Sprintf("p%03d", i), MachineType: "cpx31"})
	}

	h.exec.Execute(t.Context(), doc)
	want := []machineDelete{{mdNamespace, "p050-m1", "uid-p050-m1", "10"}}
	if !reflect.DeepEqual(h.world.machineDeletes, want) {
		t.Errorf("machine deletes %+v, want only %+v", h.world.machineDeletes, want)
	}
	checkTyped(t, "heal", wire.ActionHeal, h.store.Snapshot(), []report{
		{"p050-m1", wire.StatusDone, 7, "deleted Machine"},
		{"p130-m1", wire.StatusFailed, 7, "named past the first 100 of the desired state's workerPools by name"},
	})
}

// reasons lists the Events' reasons, one per Event, in order.
func reasons(events []event) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.MD+" "+ev.Reason)
	}
	return out
}

// A delete the apiserver refuses for good (RBAC, an admission policy) is
// asked again each pass, as the refusal may be lifted, but it is recorded
// once: each Event is a new object, a change the observer beats on, and one
// of the beat's 20 newest events.
func TestHeal_ADeleteRefusedEveryPassIsOneEvent(t *testing.T) {
	h := refusedHarness(t, "admission denied")
	doc := healing(7, healPolicy(1, 0))
	for range 3 {
		h.exec.Execute(t.Context(), doc)
		h.clock.advance(time.Minute)
	}
	if n := len(h.world.machineDeletes); n != 3 {
		t.Fatalf("%d deletes over 3 passes, want one a pass: the stimulus is the refusal", n)
	}
	want := []string{mdNamespace + "/pool-a-m1 KubehzHealFailed"}
	if got := reasons(h.events.events); !slices.Equal(got, want) {
		t.Errorf("Events %v, want %v", got, want)
	}

	// Lifted: the delete lands, which is news.
	delete(h.world.deleteErr, "pool-a-m1")
	h.exec.Execute(t.Context(), doc)
	want = append(want, mdNamespace+"/pool-a-m1 KubehzHealed")
	if got := reasons(h.events.events); !slices.Equal(got, want) {
		t.Errorf("after the refusal was lifted, Events %v, want %v", got, want)
	}
}

// A refused delete is asked again once the pool's cooldown has passed
// since, not every pass: until then the pass reads no fresh Lists, sends
// nothing, and reports the refusal word for word.
func TestHeal_ARefusedDeleteWaitsTheCooldownBeforeItIsAskedAgain(t *testing.T) {
	h := refusedHarness(t, "admission denied")
	doc := healing(7, healPolicy(1, 600))
	h.clock.set(start.Add(11 * time.Minute)) // past the term's own cooldown
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 1 {
		t.Fatalf("%d deletes on the first pass, want the one refused", n)
	}
	refused, lists := h.store.Snapshot(), h.world.freshLists
	for range 9 {
		h.clock.advance(time.Minute)
		h.exec.Execute(t.Context(), doc)
	}
	if n := len(h.world.machineDeletes); n != 1 {
		t.Errorf("%d deletes within 600 s of the refusal, want none after the first", n)
	}
	if h.world.freshLists != lists {
		t.Errorf("%d fresh Lists within the cooldown, want none", h.world.freshLists-lists)
	}
	if got := h.store.Snapshot(); !reflect.DeepEqual(got, refused) {
		t.Errorf("reports within the cooldown %+v, want the refusal unchanged: %+v", got, refused)
	}
	h.clock.advance(time.Minute) // 600 s after the refusal
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 2 {
		t.Errorf("%d deletes 600 s after the refusal, want it asked again", n)
	}
}

// A new revision empties the store, but a refusal that stands is no news:
// a platform that bumps the revision each poll would otherwise have every
// standing refusal, and a standing storm, recorded every minute.
func TestHeal_ANewRevisionRecordsNoStandingRefusalOrStormAgain(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2), poolMD("pool-b", 4))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", down))
	unnamed := func(rev int64) desired.Document {
		doc := healing(rev, healPolicy(1, 0))
		doc.WorkerPools = []desired.Pool{pool("pool-b", 4)} // pool-a is not named: a standing refusal
		return doc
	}
	for rev := int64(7); rev <= 9; rev++ {
		h.exec.Execute(t.Context(), unnamed(rev))
		h.clock.advance(time.Minute)
	}
	want := []string{mdNamespace + "/pool-a-m1 KubehzRefused"}
	if got := reasons(h.events.events); !slices.Equal(got, want) {
		t.Fatalf("over revisions 7, 8 and 9: Events %v, want %v", got, want)
	}

	for i := 1; i <= 3; i++ {
		h.world.add(machine(fmt.Sprintf("pool-b-m%d", i), "pool-b", fmt.Sprintf("node-b%d", i)))
		h.world.addNodes(node(fmt.Sprintf("node-b%d", i), "False", down))
	}
	for rev := int64(10); rev <= 12; rev++ {
		h.exec.Execute(t.Context(), unnamed(rev))
		h.clock.advance(time.Minute)
	}
	want = append(want, mdNamespace+"/pool-a-m1 KubehzStormBrake")
	if got := reasons(h.events.events); !slices.Equal(got, want) {
		t.Fatalf("a storm over revisions 10, 11 and 12: Events %v, want %v", got, want)
	}
}

// Healing switched off withdraws its reports, and a refusal that still
// stands when it is switched on again is news again; so after a 4xx from
// /desired, or a document authorizing nothing, clears everything.
func TestHeal_ARefusalWithdrawnAndBackIsRecordedAgain(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	doc := func(rev int64, armed bool) desired.Document {
		d := healing(rev, healPolicy(1, 0))
		d.WorkerPools = []desired.Pool{pool("pool-b", 1)} // pool-a is not named: a standing refusal
		d.Execution.Healing = armed
		d.Execution.Scaling = !armed // something stays authorized
		return d
	}
	h.exec.Execute(t.Context(), doc(7, true))
	h.exec.Execute(t.Context(), doc(8, false))
	h.exec.Execute(t.Context(), doc(9, true))
	h.exec.Clear("404")
	h.exec.Execute(t.Context(), doc(10, true))
	nothing := doc(11, false)
	nothing.Execution.Scaling = false
	h.exec.Execute(t.Context(), nothing)
	h.exec.Execute(t.Context(), doc(12, true))
	refused := mdNamespace + "/pool-a-m1 KubehzRefused"
	if got, want := reasons(h.events.events), []string{refused, refused, refused, refused}; !slices.Equal(got, want) {
		t.Errorf("Events %v, want the refusal at revisions 7, 9, 10 and 12", got)
	}
}

// A delete whose answer never came may have landed: each such attempt,
// one a cooldown, is recorded, however alike their reports read.
func TestHeal_EachDeleteWithoutAnAnswerIsAnEvent(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.deleteErr["pool-a-m1"] = apierrors.NewServerTimeout(machineResource, "delete", 1)
	doc := healing(7, healPolicy(1, 300))
	h.clock.set(start.Add(5 * time.Minute)) // past the term's own cooldown
	for range 11 {
		h.exec.Execute(t.Context(), doc)
		h.clock.advance(time.Minute)
	}
	if n := len(h.world.machineDeletes); n != 3 {
		t.Fatalf("%d deletes over 11 minutes with a 300 s cooldown, want 3", n)
	}
	failed := mdNamespace + "/pool-a-m1 KubehzHealFailed"
	if got, want := reasons(h.events.events), []string{failed, failed, failed}; !slices.Equal(got, want) {
		t.Errorf("Events %v, want one for each delete", got)
	}
}

// What news remembers of a heal target goes with its report: a Machine
// refused, then gone, then back under the same name is news again
// (TestNews_… checks that the memory is no bigger than the store's).
func TestHeal_AnOutcomeThatLeftTheStoreIsNewsAgain(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	add := func() {
		h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
		h.world.addNodes(node("node-1", "False", down))
	}
	doc := healing(7, healPolicy(1, 0))
	doc.WorkerPools = []desired.Pool{pool("pool-b", 1)}
	add()
	h.exec.Execute(t.Context(), doc)
	delete(h.world.machines, "pool-a-m1")
	delete(h.world.nodes, "node-1")
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	if n := len(ofType(wire.ActionHeal, h.store.Snapshot())); n != 0 {
		t.Fatalf("%d heal reports once the Machine is gone, want none", n)
	}
	add()
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc)
	want := []string{mdNamespace + "/pool-a-m1 KubehzRefused", mdNamespace + "/pool-a-m1 KubehzRefused"}
	if got := reasons(h.events.events); !slices.Equal(got, want) {
		t.Errorf("Events %v, want the refusal recorded again when it came back", got)
	}
}
