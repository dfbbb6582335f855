package upgrade

import (
	"strings"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// A roll the document no longer asks for still blocks every other pool: the
// safety test found each of these starting a second roll.
func TestUpgrade_AnUnfinishedRollBlocksOtherPoolsWhateverTheDocumentAsks(t *testing.T) {
	cases := []struct {
		name     string
		o        Observed
		pools    []string
		target   string
		mem      RolledFrom // what this term rolled; nil is nothing
		blocking string
	}{
		{
			name: "the rolling pool left the document",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 2)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", oldV), joined("a-2", "pool-a", newV),
					joined("b-1", "pool-b", oldV), joined("b-2", "pool-b", oldV)}},
			pools: []string{"pool-b"}, target: newV, blocking: "pool-a",
		},
		{
			name: "the target changed under the rolling pool",
			o: Observed{MDs: mdsOf(worker("pool-a", "v1.35.7", 2), worker("pool-b", oldV, 2)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", oldV), joined("a-2", "pool-a", "v1.35.7"),
					joined("b-1", "pool-b", oldV), joined("b-2", "pool-b", oldV)}},
			pools: []string{"pool-a", "pool-b"}, target: newV, blocking: "pool-a",
		},
		{
			name: "an old machine of a finished roll is still deleting",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 1), worker("pool-b", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{{Name: "a-1", Pool: "pool-a", Kubelet: oldV, NodeName: "n", Deleting: true},
					joined("a-2", "pool-a", newV), joined("b-1", "pool-b", oldV)}},
			pools: []string{"pool-b"}, target: newV, blocking: "pool-a",
		},
		{
			name: "the rolling pool left the document with its last replacement not joined",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", newV), {Name: "a-2", Pool: "pool-a", Kubelet: newV},
					joined("b-1", "pool-b", oldV)}},
			pools: []string{"pool-b"}, target: newV, mem: RolledFrom{"pool-a": oldV}, blocking: "pool-a",
		},
		{
			name: "the rolling pool left the document with its last replacement not created",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{joined("a-1", "pool-a", newV), joined("b-1", "pool-b", oldV)}},
			pools: []string{"pool-b"}, target: newV, mem: RolledFrom{"pool-a": oldV}, blocking: "pool-a",
		},
		{
			name: "a machine two pools claim shows both rolling",
			o: Observed{MDs: mdsOf(worker("pool-a", newV, 1), worker("pool-b", oldV, 1), worker("pool-c", oldV, 1)), ControlPlane: cpV,
				Machines: []Machine{{Name: "x-1", Candidates: []string{"pool-a", "pool-c"}, Kubelet: oldV, NodeName: "n"},
					joined("b-1", "pool-b", oldV)}},
			pools: []string{"pool-b"}, target: newV, blocking: "pool-a",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := tc.mem
			if mem == nil {
				mem = RolledFrom{}
			}
			steps, retry := Plan(tc.o, policyFor(tc.target, tc.pools...), mem)
			for _, s := range steps {
				if s.Patch != nil {
					t.Fatalf("patched %s while %s rolls", s.Patch.MD, tc.blocking)
				}
			}
			last := steps[len(steps)-1].Action
			if last.Target != "pool-b" || last.Status != wire.StatusPending || !strings.Contains(last.Detail, "one pool rolls at a time") ||
				!strings.Contains(last.Detail, tc.blocking) {
				t.Errorf("pool-b: %+v, want pending naming %s", last, tc.blocking)
			}
			if !retry {
				t.Error("retry = false while waiting")
			}
		})
	}
}

// A target changed in the tail of pool-a's roll (its last replacement not
// joined, every machine spelt like its template) must not start pool-0,
// which sorts, and so is decided, first.
func TestUpgrade_TheTailOfARollBlocksAPoolDecidedBeforeIt(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", "v1.35.5", 2), worker("pool-0", oldV, 1)), ControlPlane: cpV,
		Machines: []Machine{joined("a-1", "pool-a", "v1.35.5"), {Name: "a-2", Pool: "pool-a", Kubelet: "v1.35.5"},
			joined("z-1", "pool-0", oldV)}}
	steps, _ := Plan(o, policyFor(newV, "pool-0", "pool-a"), RolledFrom{"pool-a": "v1.35.4"})
	if len(steps) != 2 || steps[0].Action.Target != "pool-0" {
		t.Fatalf("steps %+v, want one for pool-0 then one for pool-a", steps)
	}
	if first := steps[0]; first.Patch != nil || first.Action.Status != wire.StatusPending ||
		!strings.Contains(first.Action.Detail, `"pool-a"`) {
		t.Errorf("pool-0: %+v, want pending behind pool-a", first)
	}
}

// A pool short of a joined machine that this term never rolled is not in a
// roll's tail: one whose machine the cloud cannot create would otherwise
// hold every roll in the cluster. It is the control of the tail cases above,
// the same machines without the memory of a roll.
func TestUpgrade_APoolShortOfMachinesThatWasNotRolledHoldsNothing(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", newV, 2), worker("pool-b", oldV, 1)), ControlPlane: cpV,
		Machines: []Machine{joined("a-1", "pool-a", newV), {Name: "a-2", Pool: "pool-a", Kubelet: newV},
			joined("b-1", "pool-b", oldV)}}
	steps, _ := Plan(o, policyFor(newV, "pool-b"), RolledFrom{})
	if len(steps) != 1 || steps[0].Patch == nil || steps[0].Patch.MD != "pool-b" {
		t.Fatalf("steps %+v, want pool-b patched", steps)
	}
}

// A pool whose own roll is unfinished may be sent a newer target: that is
// still one pool rolling.
func TestUpgrade_ARollingPoolMayBeSentANewerTarget(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", "v1.35.5", 2)), ControlPlane: cpV,
		Machines: []Machine{joined("a-1", "pool-a", "v1.35.4"), joined("a-2", "pool-a", "v1.35.5")}}
	steps, _ := Plan(o, policyFor(newV, "pool-a"), RolledFrom{})
	if len(steps) != 1 || steps[0].Patch == nil || steps[0].Patch.Target != newV {
		t.Fatalf("steps %+v, want pool-a patched to %s", steps, newV)
	}
}

// A live machine already newer than the target would be rolled down: that
// is a downgrade, even when the template is older.
func TestUpgrade_AMachineNewerThanTheTargetMakesItADowngrade(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", "v1.34.1", 2)), ControlPlane: cpV,
		Machines: []Machine{joined("a-1", "pool-a", "v1.34.1"), joined("a-2", "pool-a", "v1.35.9")}}
	steps, _ := Plan(o, policyFor(newV, "pool-a"), RolledFrom{})
	if len(steps) != 1 || steps[0].Patch != nil || !strings.Contains(steps[0].Action.Detail, "downgrade") ||
		!strings.Contains(steps[0].Action.Detail, "a-2") {
		t.Fatalf("steps %+v, want a downgrade refusal naming Machine a-2", steps)
	}
}

// A machine naming no kubelet cannot be shown to have finished a roll, so
// its pool counts as rolling.
func TestUpgrade_AMachineWithoutAKubeletKeepsItsPoolRolling(t *testing.T) {
	o := Observed{MDs: mdsOf(worker("pool-a", newV, 1), worker("pool-b", oldV, 1)), ControlPlane: cpV,
		Machines: []Machine{{Name: "a-1", Pool: "pool-a", NodeName: "n"}, joined("b-1", "pool-b", oldV)}}
	steps, _ := Plan(o, policyFor(newV, "pool-b"), RolledFrom{})
	if len(steps) != 1 || steps[0].Patch != nil || !strings.Contains(steps[0].Action.Detail, "pool-a") {
		t.Fatalf("steps %+v, want pool-b waiting for pool-a", steps)
	}
}
