package upgrade

import (
	"testing"
	"unicode"
)

// TestPlan_OutsideTextInADetailIsEscaped: versions from the desired state,
// a MachineDeployment, a Machine or the control plane are quoted in
// details, which ride the beat and the reports ConfigMap to whoever reads
// them; an escape sequence or bidi override in one must arrive escaped,
// whatever the plan decides about it.
func TestPlan_OutsideTextInADetailIsEscaped(t *testing.T) {
	const esc = "\x1b]0;owned\a\u009b2J\u202E"
	tests := []struct {
		name string
		o    Observed
		p    Policy
	}{
		{"target", Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: cpV},
			policyFor(newV+esc, "pool-a")},
		{"MachineDeployment kubelet", Observed{MDs: mdsOf(worker("pool-a", oldV+esc, 2)), Machines: twoOld, ControlPlane: cpV},
			policyFor(newV, "pool-a")},
		{"MachineDeployment kubelet, newer", Observed{MDs: mdsOf(worker("pool-a", "v1.36.0"+esc, 2)), Machines: twoOld, ControlPlane: cpV},
			policyFor(newV, "pool-a")},
		{"Machine kubelet", Observed{MDs: mdsOf(worker("pool-a", newV, 2)), ControlPlane: cpV,
			Machines: []Machine{joined("pool-a-1", "pool-a", "v1.36.0"+esc), joined("pool-a-2", "pool-a", newV)}},
			policyFor(newV, "pool-a")},
		{"control plane", Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: "v1.34.2" + esc},
			policyFor(newV, "pool-a")},
		{"control plane unparsable", Observed{MDs: mdsOf(worker("pool-a", oldV, 2)), Machines: twoOld, ControlPlane: "x" + esc},
			policyFor(newV, "pool-a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, _ := Plan(tt.o, tt.p, RolledFrom{})
			if len(steps) == 0 {
				t.Fatal("no report: nothing to check")
			}
			for _, s := range steps {
				for _, r := range s.Action.Target + s.Action.Detail {
					if !unicode.IsPrint(r) {
						t.Fatalf("report %+v holds %U", s.Action, r)
					}
				}
			}
		})
	}
}
