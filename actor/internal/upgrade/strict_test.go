package upgrade

import (
	"slices"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// Issue 22, points 1 and 2: versions order as semver does, the target must
// be spelt strictly, and what the cluster says is read tolerantly but never
// rolled over when it cannot be read.

// TestUpgrade_APreReleaseTargetBelowThePoolIsRefusedAsADowngrade: a
// pre-release is below its release, and rc.1 below rc.2, so each of these
// would roll a pool down. The controls roll upward through pre-releases.
func TestUpgrade_APreReleaseTargetBelowThePoolIsRefusedAsADowngrade(t *testing.T) {
	const cp = "v1.36.2"
	refused := func(pool, current, target string) wire.Action {
		return report(pool, wire.StatusFailed,
			`refusing a downgrade: MachineDeployment "`+pool+`" runs kubelet `+current+` and the desired `+target+` is older`)
	}
	runPassCases(t, []passCase{
		{
			name: "v1.35.0 to v1.35.0-rc.1 is refused",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.35.0", 1)), ControlPlane: cp},
			p:    policyFor("v1.35.0-rc.1", "pool-a"),
			want: []wire.Action{refused("pool-a", "v1.35.0", "v1.35.0-rc.1")},
		},
		{
			name: "v1.36.0-rc.2 to v1.36.0-rc.1 is refused",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.36.0-rc.2", 1)), ControlPlane: cp},
			p:    policyFor("v1.36.0-rc.1", "pool-a"),
			want: []wire.Action{refused("pool-a", "v1.36.0-rc.2", "v1.36.0-rc.1")},
		},
		{
			name: "v1.36.0-rc.10 to v1.36.0-rc.9 is refused: numbers order as numbers",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.36.0-rc.10", 1)), ControlPlane: cp},
			p:    policyFor("v1.36.0-rc.9", "pool-a"),
			want: []wire.Action{refused("pool-a", "v1.36.0-rc.10", "v1.36.0-rc.9")},
		},
		{
			name: "a cluster-spelt 1.35.0 to v1.35.0-beta.0 is refused",
			o:    Observed{MDs: mdsOf(worker("pool-a", "1.35.0", 1)), ControlPlane: cp},
			p:    policyFor("v1.35.0-beta.0", "pool-a"),
			want: []wire.Action{refused("pool-a", "1.35.0", "v1.35.0-beta.0")},
		},
		{
			name: "a live machine at v1.36.0 refuses v1.36.0-rc.1 on a template at v1.35.9",
			o: Observed{MDs: mdsOf(worker("pool-a", "v1.35.9", 2)), ControlPlane: cp,
				Machines: []Machine{joined("a-1", "pool-a", "v1.35.9"), joined("a-2", "pool-a", "v1.36.0")}},
			p: policyFor("v1.36.0-rc.1", "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusFailed,
				`refusing a downgrade: MachineDeployment "pool-a" runs kubelet v1.36.0 on Machine a-2 and the desired v1.36.0-rc.1 is older`)},
		},
		{
			name: "control: v1.36.0-rc.1 to v1.36.0-rc.2 rolls",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.36.0-rc.1", 0)), ControlPlane: cp},
			p:    policyFor("v1.36.0-rc.2", "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusInProgress, "v1.36.0-rc.1 → v1.36.0-rc.2 (0/0)")},
			wantPatches: []Patch{
				roll("pool-a", "v1.36.0-rc.1", "v1.36.0-rc.2"),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": "v1.36.0-rc.1"},
		},
		{
			name: "control: v1.36.0-rc.2 to its release v1.36.0 rolls",
			o:    Observed{MDs: mdsOf(worker("pool-a", "v1.36.0-rc.2", 0)), ControlPlane: cp},
			p:    policyFor("v1.36.0", "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusInProgress, "v1.36.0-rc.2 → v1.36.0 (0/0)")},
			wantPatches: []Patch{
				roll("pool-a", "v1.36.0-rc.2", "v1.36.0"),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": "v1.36.0-rc.2"},
		},
	})
}

// TestUpgrade_ATargetOutsideTheGrammarIsRefusedAndNeverPatched: each of
// these was compared loosely with a pool already at v1.35.6 and written
// verbatim into its template. Each is now refused, naming why, with nothing
// patched and no retry (only a new document can change it).
func TestUpgrade_ATargetOutsideTheGrammarIsRefusedAndNeverPatched(t *testing.T) {
	cases := []struct{ target, why string }{
		{"v1.35.6+build.1", "build metadata +build.1 is not allowed"},
		{"v1.35.06", "not a semantic version"},
		{"v01.35.6", "not a semantic version"},
		{"v1.35.6 junk", "not a semantic version"},
		{"v1.35x.6", "not a semantic version"},
		{"v1.35", "not a semantic version"},
		{"1.35", "no leading v"},
		{"1.35.6", "no leading v"},
		{"V1.35.6", "no leading v"},
		{"v1.35.6-rc.01", "not a semantic version"},
		{"v1.35.6-", "not a semantic version"},
		{"v1.35.6-1a", `pre-release identifier "1a" is neither a number nor starts with a letter`},
		{"v1.35.6\x1b]8;;http://x\x07", "not a semantic version"},
		{"v1.35.6\x1b[2J", "not a semantic version"},
		{"v1.35.6-rc.1\r\nv1.99.0", "not a semantic version"},
		{"v1.35.6-" + strings.Repeat("a", 57), "65 bytes, over the 64 allowed"},
		{"v1.35.6-" + strings.Repeat("x", 100<<10), "102408 bytes, over the 64 allowed"},
	}
	for _, tc := range cases {
		name := tc.target
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			o := Observed{MDs: mdsOf(worker("pool-a", newV, 2)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", newV), joined("a-2", "pool-a", newV)}}
			api := &fakeAPI{}
			got, retry := execute(o, policyFor(tc.target, "pool-a"), RolledFrom{}, api)
			if len(api.patches) != 0 {
				t.Fatalf("patched %+v", api.patches)
			}
			if retry {
				t.Error("retry = true for a refusal only a new document can clear")
			}
			if len(got) != 1 || got[0].Status != wire.StatusFailed {
				t.Fatalf("reports %+v, want one failed", got)
			}
			d := got[0].Detail
			for _, kw := range []string{"invalid desired version", tc.why, "vMAJOR.MINOR.PATCH[-pre-release]", "64 bytes"} {
				if !strings.Contains(d, kw) {
					t.Errorf("detail %q lacks %q", d, kw)
				}
			}
			if strings.ContainsAny(d, "\x1b\x07\r\n") || len(d) > 300 {
				t.Errorf("detail %q carries a control character or is %d bytes long", d, len(d))
			}
		})
	}
}

// TestUpgrade_ASemanticallyEqualTargetIsAlreadyAtTarget: a template the
// cluster spells loosely is at target when it names the same version, so
// nothing rolls and nothing is reported; a strict target is patched as
// received, which is its canonical form.
func TestUpgrade_ASemanticallyEqualTargetIsAlreadyAtTarget(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "build metadata on the template is the same version",
			o: Observed{MDs: mdsOf(worker("pool-a", "v1.35.6+k3s1", 1)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", "v1.35.6+k3s1")}},
			p: policyFor(newV, "pool-a"),
		},
		{
			name: "no leading v and surrounding spaces on the template are the same version",
			o: Observed{MDs: mdsOf(worker("pool-a", " 1.35.6 ", 1)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", "1.35.6")}},
			p: policyFor(newV, "pool-a"),
		},
		{
			name: "a pre-release target equal to the template",
			o: Observed{MDs: mdsOf(worker("pool-a", "1.36.0-rc.1", 1)), ControlPlane: "v1.36.0",
				Machines: []Machine{joined("a-1", "pool-a", "v1.36.0-rc.1")}},
			p: policyFor("v1.36.0-rc.1", "pool-a"),
		},
		{
			name: "a mid-roll pool spelt loosely counts its machines by version",
			o: Observed{MDs: mdsOf(worker("pool-a", "1.35.6", 2)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", "v1.35.6+k3s1"), joined("a-2", "pool-a", oldV)}},
			p:         policyFor(newV, "pool-a"),
			want:      []wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (1/2)")},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": oldV},
		},
		{
			name: "a roll from a loose spelling patches the target as received",
			o:    Observed{MDs: mdsOf(worker("pool-a", "1.35.5+k3s1", 0)), ControlPlane: cpV},
			p:    policyFor(newV, "pool-a"),
			want: []wire.Action{report("pool-a", wire.StatusInProgress, "1.35.5+k3s1 → v1.35.6 (0/0)")},
			wantPatches: []Patch{
				roll("pool-a", "1.35.5+k3s1", newV),
			},
			wantRetry: true,
			wantMem:   RolledFrom{"pool-a": "1.35.5+k3s1"},
		},
	})
}

// TestUpgrade_AMachineKubeletThatCannotBeReadRefusesTheRoll: a live
// machine's kubelet the planner cannot read might be newer than the target,
// so the roll is refused rather than compared with nothing. A deleting one
// is on its way out and does not count.
func TestUpgrade_AMachineKubeletThatCannotBeReadRefusesTheRoll(t *testing.T) {
	refusal := func(machine, kubelet string) wire.Action {
		return report("pool-a", wire.StatusFailed, `cannot parse kubelet version "`+kubelet+`" of Machine "`+machine+
			`" in pool "pool-a", so a roll to v1.35.6 cannot be shown to go upward; refusing`)
	}
	cases := []struct {
		name    string
		machine Machine
		want    []wire.Action
		patched bool
	}{
		{"a spelling the planner cannot read", joined("a-2", "pool-a", "latest"), []wire.Action{refusal("a-2", "latest")}, false},
		{"two numbers only", joined("a-2", "pool-a", "v1.36"), []wire.Action{refusal("a-2", "v1.36")}, false},
		{"no kubelet at all", Machine{Name: "a-2", Pool: "pool-a", NodeName: "n"}, []wire.Action{refusal("a-2", "")}, false},
		{"control: a deleting machine does not count",
			Machine{Name: "a-2", Pool: "pool-a", Kubelet: "latest", NodeName: "n", Deleting: true},
			[]wire.Action{report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/1)")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Observed{MDs: mdsOf(worker("pool-a", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", oldV), tc.machine}}
			api := &fakeAPI{}
			got, _ := execute(o, policyFor(newV, "pool-a"), RolledFrom{}, api)
			if (len(api.patches) > 0) != tc.patched || !slices.Equal(got, tc.want) {
				t.Fatalf("reports %+v patches %+v, want %+v patched %v", got, api.patches, tc.want, tc.patched)
			}
		})
	}
}

// TestUpgrade_AMachineSeveralPoolsClaimCountsInTheDowngradeCheck: a machine
// whose pool is ambiguous (overlapping selectors) still runs somewhere a
// roll of either pool could replace it, so its newer kubelet refuses both.
func TestUpgrade_AMachineSeveralPoolsClaimCountsInTheDowngradeCheck(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", oldV, 1)), ControlPlane: "v1.36.0",
		Machines: []Machine{{Name: "x-1", Candidates: []string{"pool-a", "pool-c"}, Kubelet: "v1.36.0", NodeName: "n"}}}
	steps, _ := Plan(o, policyFor(newV, "pool-a"), RolledFrom{})
	want := report("pool-a", wire.StatusFailed,
		`refusing a downgrade: MachineDeployment "pool-a" runs kubelet v1.36.0 on Machine x-1 and the desired v1.35.6 is older`)
	if len(steps) != 1 || steps[0].Patch != nil || steps[0].Action != want {
		t.Fatalf("steps %+v, want only %+v", steps, want)
	}
}
