package upgrade

import (
	"errors"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// TestUpgrade_RefusalsAndReadFailures pins the deliberate changes from the
// original (docs/contract.md#g-8, docs/contract.md#g-9, docs/contract.md#g-10)
// and the failed reads.
func TestUpgrade_RefusalsAndReadFailures(t *testing.T) {
	const invalidBuild = `invalid desired version (build metadata +build.1 is not allowed): "v1.35.6+build.1"; ` +
		`want vMAJOR.MINOR.PATCH[-pre-release], no leading zeros, at most 64 bytes, e.g. v1.35.6`
	converged := []Machine{joined("pool-a-1", "pool-a", newV), joined("pool-a-2", "pool-a", newV)}
	runPassCases(t, []passCase{
		{
			name: "G-8 a minor downgrade is refused and never patched",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.36.1", 1)), ControlPlane: "v1.36.1"},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				`refusing a downgrade: MachineDeployment "pool-a" runs kubelet v1.36.1 and the desired v1.35.6 is older`)},
			keywords: map[string][]string{"pool-a": {"downgrade", "v1.36.1", newV}},
		},
		{
			name: "G-8 a patch-level downgrade 1.35.6 to v1.35.5 is refused",
			o:    Observed{MDs: mdsOf(worker("pool-a", "1.35.6", 1)), ControlPlane: cpV},
			p:    policyFor("v1.35.5", "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				`refusing a downgrade: MachineDeployment "pool-a" runs kubelet 1.35.6 and the desired v1.35.5 is older`)},
		},
		{
			name: "G-8 a kubelet that cannot be parsed cannot be compared and is refused",
			o:    Observed{MDs: mdsOf(worker("pool-a", "latest", 1)), ControlPlane: cpV},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				`cannot parse kubelet version "latest" of MachineDeployment "pool-a", so it cannot be compared with v1.35.6; refusing`)},
		},
		{
			name: "G-9 control-plane and autoscaler pools get their own refusal while the control plane is behind",
			o: Observed{ControlPlane: "v1.34.2", MDs: mdsOf(autoscaled, worker("edge-cp-pool", oldV, 1),
				worker("master-pool", "", 1), worker("pool-a", oldV, 1))},
			p: policyFor(newV, "pool-a", "master-pool", "edge-cp-pool", "autoscaled"),
			want: []wire.Action{
				report("autoscaled", wire.StatusFailed, autoscaledRefusal),
				report("edge-cp-pool", wire.StatusFailed, edgeCPRefusal),
				report("master-pool", wire.StatusFailed,
					`refusing: MachineDeployment "master-pool" looks like a control-plane pool (name contains "master"); the agent never upgrades control planes`),
				report("pool-a", wire.StatusFailed,
					"control plane not yet at target: observed v1.34.2, target v1.35.6; upgrade the control plane first (lo provision / kubeone apply)"),
			},
			wantRetry: true,
		},
		{
			name: "G-9 converged and rolling pools keep their reports while the control plane is unknown",
			o: Observed{ControlPlane: "garbage", MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", newV, 2), worker("pool-c", oldV, 1)),
				Machines: append(converged, joined("pool-b-1", "pool-b", newV))},
			p:   policyFor(newV, "pool-a", "pool-b", "pool-c"),
			mem: RolledFrom{"pool-a": oldV, "pool-b": "v1.35.1"},
			want: []wire.Action{
				report("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)"),
				report("pool-b", wire.StatusInProgress, "v1.35.1 → v1.35.6 (1/2)"),
				report("pool-c", wire.StatusFailed, `control plane version unknown (cannot parse "garbage"); will retry`),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV, "pool-b": "v1.35.1"},
		},
		{
			// A target that cannot be read leaves no pool at target: the
			// converged one is failed too, and forgets its "from".
			name: "G-9 an invalid desired version fails every worker pool with no retry; a control-plane pool keeps its own reason",
			o: Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 1), worker("edge-cp-pool", oldV, 1)),
				Machines: converged},
			p:   policyFor("v1.35.6+build.1", "pool-a", "pool-b", "edge-cp-pool"),
			mem: RolledFrom{"pool-a": oldV},
			want: []wire.Action{
				report("edge-cp-pool", wire.StatusFailed, edgeCPRefusal),
				report("pool-a", wire.StatusFailed, invalidBuild),
				report("pool-b", wire.StatusFailed, invalidBuild),
			},
		},
		{
			name: "G-10 an invalid pool name is reported, an empty one skipped",
			o:    Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 0), worker("Not A Name!", oldV, 1))},
			p:    policyFor(newV, "Not A Name!", "", "pool-a"),
			want: []wire.Action{report("Not A Name!", wire.StatusFailed, `invalid pool name "Not A Name!": not a DNS-1123 subdomain`)},
		},
		{
			name: "a pool named twice is refused, never patched, and the other rolls",
			o: Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", oldV, 1), worker("pool-b", oldV, 1)),
				Machines: []Machine{joined("a-1", "pool-a", oldV), joined("b-1", "pool-b", oldV)}},
			p: policyFor(newV, "pool-a", "pool-b", "pool-a"),
			want: []wire.Action{
				report("pool-a", wire.StatusFailed, `pool "pool-a" is named more than once in the desired state; refusing to pick one`),
				report("pool-b", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)"),
			},
			wantPatches: []Patch{roll("pool-b", oldV, newV)},
			wantRetry:   true,
			wantMem:     RolledFrom{"pool-b": oldV},
		},
		{
			name: "an MD without a kubelet field is refused, never given one",
			o:    Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", "", 1))},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				`MachineDeployment "pool-a" has no kubelet version field (spec.template.spec.versions.kubelet); refusing to invent one`)},
		},
		{
			name: "a failed MD list fails every valid pool and retries; an invalid name keeps its own refusal",
			o:    Observed{MDsErr: errors.New("machinedeployments.cluster.k8s.io is forbidden:\nno access"), ControlPlane: cpV},
			p:    policyFor(newV, "pool-a", "Bad_Name"),
			want: []wire.Action{
				report("Bad_Name", wire.StatusFailed, `invalid pool name "Bad_Name": not a DNS-1123 subdomain`),
				report("pool-a", wire.StatusFailed, `cannot list MachineDeployments in namespace "kube-system": machinedeployments.cluster.k8s.io is forbidden: no access`),
			},
			wantRetry: true,
		},
		{
			name:      "a nil MD map is a failed list",
			o:         Observed{ControlPlane: cpV},
			p:         policyFor(newV, "pool-a"),
			want:      []wire.Action{report("pool-a", wire.StatusFailed, `cannot list MachineDeployments in namespace "kube-system": no result`)},
			wantRetry: true,
		},
		{
			name: "a failed Machine list fails every pool and retries",
			o:    Observed{MDs: mdsOf(worker("pool-a", oldV, 1)), MachinesErr: errors.New("machines is forbidden"), ControlPlane: cpV},
			p:    policyFor(newV, "pool-a", "pool-b"),
			want: []wire.Action{
				report("pool-a", wire.StatusFailed, `cannot list Machines in namespace "kube-system": machines is forbidden (progress needs the machines read RBAC)`),
				report("pool-b", wire.StatusFailed, `cannot list Machines in namespace "kube-system": machines is forbidden (progress needs the machines read RBAC)`),
			},
			wantRetry: true,
		},
		{
			name: "with only invalid names a failed list does not retry",
			o:    Observed{MDsErr: errors.New("down")},
			p:    policyFor(newV, "-bad"),
			want: []wire.Action{report("-bad", wire.StatusFailed, `invalid pool name "-bad": not a DNS-1123 subdomain`)},
		},
	})
}

// TestUpgrade_ProgressCounting pins n/m: deleting machines do not count, a
// machine counts as upgraded only once its node joined, and m is raised to
// spec.replicas so a gap mid-roll never reads as convergence.
func TestUpgrade_ProgressCounting(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "a deleting old machine and an unjoined new one",
			o: Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 3)), Machines: []Machine{
				joined("pool-a-1", "pool-a", newV),
				{Name: "pool-a-2", Pool: "pool-a", Kubelet: newV},
				{Name: "pool-a-3", Pool: "pool-a", Kubelet: oldV, NodeName: "node-3", Deleting: true},
				joined("other-1", "other", oldV),
				{Name: "stray", Kubelet: oldV},
			}},
			p:         policyFor(newV, "pool-a"),
			want:      []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/3)")},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
		{
			name:      "with no old machine left the derived from is the target",
			o:         Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 2)), Machines: []Machine{joined("pool-a-1", "pool-a", newV)}},
			p:         policyFor(newV, "pool-a"),
			want:      []wire.Action{report("pool-a", wire.StatusInProgress, "v1.35.6 → v1.35.6 (1/2)")},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": newV},
		},
		{
			name: "an off-target pool forgets the from of an earlier roll",
			o:    Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", oldV, 0))},
			p:    policyFor(newV, "pool-a"),
			mem:  RolledFrom{"pool-a": "v1.33.1"},
			want: []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/0)")},
			wantPatches: []Patch{
				roll("pool-a", oldV, newV),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
	})
}
