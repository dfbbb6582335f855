package upgrade

import (
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/wire"
)

var mdResource = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}

// twoOld is pool-a on the old kubelet with both machines joined.
var twoOld = []Machine{joined("pool-a-1", "pool-a", oldV), joined("pool-a-2", "pool-a", oldV)}

var autoscaled = MD{Name: "autoscaled", Kubelet: oldV, Replicas: replicas(2), Annotations: map[string]string{
	"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}}

const (
	autoscaledRefusal = `unsupported: MachineDeployment "autoscaled" is managed by cluster-autoscaler (annotation cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size); roll it with the autoscaler's tooling`
	edgeCPRefusal     = `refusing: MachineDeployment "edge-cp-pool" looks like a control-plane pool (name has the segment "cp"); the agent never upgrades control planes`
)

// TestUpgrade_Decisions pins the upgrade decisions of
// docs/contract.md#upgrade-decisions one case each, a roll's progress in
// two passes.
func TestUpgrade_Decisions(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "control plane behind the target fails with no patch and retries",
			o:    Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: "v1.34.2"},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				"control plane not yet at target: observed v1.34.2, target v1.35.6; upgrade the control plane first (lo provision / kubeone apply)")},
			wantRetry: true,
			keywords:  map[string][]string{"pool-a": {"control plane not yet at target", "v1.34.2", newV}},
		},
		{
			name:      "unknown control plane version fails with no patch and retries",
			o:         Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld},
			p:         policyFor(newV, "pool-a"),
			want:      []wire.Action{report("pool-a", wire.StatusFailed, "control plane version unknown (not read yet); will retry")},
			wantRetry: true,
		},
		{
			name: "a roll sets the MD kubelet and reports 0/2",
			o:    Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: cpV},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/2)")},
			wantPatches: []Patch{
				roll("pool-a", oldV, newV),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
		{
			name: "progress 1/2 is in progress",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2)), ControlPlane: cpV,
				Machines: []Machine{joined("pool-a-1", "pool-a", oldV), joined("pool-a-3", "pool-a", newV)}},
			p:         policyFor(newV, "pool-a"),
			mem:       RolledFrom{"pool-a": oldV},
			want:      []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/2)")},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
		{
			name: "progress 2/2 is done with no retry",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2)), ControlPlane: cpV,
				Machines: []Machine{joined("pool-a-3", "pool-a", newV), joined("pool-a-4", "pool-a", newV)}},
			p:       policyFor(newV, "pool-a"),
			mem:     RolledFrom{"pool-a": oldV},
			want:    []wire.Action{report("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)")},
			wantMem: RolledFrom{"pool-a": oldV},
		},
		{
			name: "a pool mid-roll blocks the others and its from is derived from the straggler",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{joined("pool-a-x1", "pool-a", newV), joined("pool-a-x2", "pool-a", oldV),
					joined("pool-b-1", "pool-b", oldV)}},
			p: policyFor(newV, "pool-b", "pool-a"),
			want: []wire.Action{
				report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/2)"),
				report("pool-b", wire.StatusPending, `one pool rolls at a time; waiting for pool "pool-a" to converge`),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
		{
			name:      "an autoscaler pool is unsupported and edge-cp-pool is control-plane, neither patched",
			o:         Observed{MDs: mdsOf(autoscaled, worker("edge-cp-pool", oldV, 1)), ControlPlane: cpV},
			p:         policyFor(newV, "edge-cp-pool", "autoscaled"),
			want:      []wire.Action{report("autoscaled", wire.StatusFailed, autoscaledRefusal), report("edge-cp-pool", wire.StatusFailed, edgeCPRefusal)},
			keywords:  map[string][]string{"autoscaled": {"unsupported"}, "edge-cp-pool": {"control-plane"}},
			wantRetry: false,
		},
		{
			name: "a patch failure fails the pool, queues the next and retries",
			o: Observed{MDs: mdsOf(worker("pool-a", oldV, 2), worker("pool-b", oldV, 1)),
				Machines: append(slices.Clone(twoOld), joined("pool-b-1", "pool-b", oldV)), ControlPlane: cpV},
			p:         policyFor(newV, "pool-b", "pool-a"),
			patchErrs: map[string]error{"pool-a": errors.New("connection refused")},
			want: []wire.Action{
				report("pool-a", wire.StatusFailed, "patch failed: connection refused"),
				report("pool-b", wire.StatusPending, "queued behind an earlier failure in this pass; will retry next poll"),
			},
			wantPatches: []Patch{
				roll("pool-a", oldV, newV),
			},
			wantRetry: true,
		},
		{
			name: "everything at target and never driven here reports nothing and does not retry",
			o: Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 1), worker("pool-b", "1.35.6", 1),
				MD{Name: "autoscaled", Kubelet: newV, Annotations: autoscaled.Annotations}, worker("edge-cp-pool", newV, 1)),
				Machines: []Machine{joined("pool-a-1", "pool-a", newV), joined("pool-b-1", "pool-b", "1.35.6")}},
			p: policyFor(newV, "pool-a", "pool-b", "autoscaled", "edge-cp-pool"),
		},
		{
			name: "a nil version reports nothing",
			o:    Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: cpV},
			p:    policyFor("  ", "pool-a"),
		},
		{
			name: "an unmatched pool fails with no MachineDeployment",
			o:    Observed{MDs: mdsOf(worker("pool-a", newV, 0)), ControlPlane: cpV},
			p:    policyFor(newV, "pool-x", "pool-a"),
			want: []wire.Action{report("pool-x", wire.StatusFailed,
				`no MachineDeployment named "pool-x" in namespace "kube-system" (pools are matched to MachineDeployments by name)`)},
			keywords: map[string][]string{"pool-x": {"no MachineDeployment", "pool-x", testNS}},
		},
		{
			name:      "a stale read on the patch is re-evaluated next poll",
			o:         Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: cpV},
			p:         policyFor(newV, "pool-a"),
			patchErrs: map[string]error{"pool-a": apierrors.NewConflict(mdResource, "pool-a", errors.New("the object has been modified"))},
			want: []wire.Action{report("pool-a", wire.StatusPending,
				`stale read; re-evaluating next poll (MachineDeployment "pool-a" changed since it was read)`)},
			wantPatches: []Patch{
				roll("pool-a", oldV, newV),
			},
			wantRetry: true,
		},
	})
}

// TestUpgrade_OnePoolRollsAtATime runs the passes of a two-pool roll:
// pool-b waits while pool-a rolls and starts once pool-a converged.
func TestUpgrade_OnePoolRollsAtATime(t *testing.T) {
	p := policyFor(newV, "pool-b", "pool-a")
	mem := RolledFrom{}
	api := &fakeAPI{}
	pass := func(aKubelet string, machines ...Machine) ([]wire.Action, bool) {
		mds := mdsOf(worker("pool-a", aKubelet, 1), worker("pool-b", oldV, 1))
		return execute(Observed{MDs: mds, Machines: machines, ControlPlane: cpV}, p, mem, api)
	}
	waiting := report("pool-b", wire.StatusPending, `one pool rolls at a time; waiting for pool "pool-a" to converge`)

	got, retry := pass(oldV, joined("pool-a-1", "pool-a", oldV), joined("pool-b-1", "pool-b", oldV))
	want := []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)"), waiting}
	if !retry || !slices.Equal(got, want) || len(api.patches) != 1 || api.patches[0].MD != "pool-a" {
		t.Fatalf("pass 1: %+v retry %v patches %+v", got, retry, api.patches)
	}
	got, retry = pass(newV, joined("pool-a-1", "pool-a", oldV), joined("pool-b-1", "pool-b", oldV))
	want = []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)"), waiting}
	if !retry || !slices.Equal(got, want) || len(api.patches) != 1 {
		t.Fatalf("pass 2: %+v retry %v patches %+v", got, retry, api.patches)
	}
	got, retry = pass(newV, joined("pool-a-2", "pool-a", newV), joined("pool-b-1", "pool-b", oldV))
	want = []wire.Action{
		report("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (1/1)"),
		report("pool-b", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)"),
	}
	if !retry || !slices.Equal(got, want) || len(api.patches) != 2 || api.patches[1].MD != "pool-b" {
		t.Fatalf("pass 3: %+v retry %v patches %+v", got, retry, api.patches)
	}
}
