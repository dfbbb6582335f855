package upgrade

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

func TestUpgrade_PatchOutcomes(t *testing.T) {
	step := Step{
		Action: report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/2)"),
		Patch:  &Patch{MDPatch: refuse.MDPatch{MD: "pool-a", Namespace: testNS, ResourceVersion: "7"}, From: oldV, Target: newV},
	}
	stale := report("pool-a", wire.StatusPending, `stale read; re-evaluating next poll (MachineDeployment "pool-a" changed since it was read)`)
	forbidden := apierrors.NewForbidden(mdResource, "pool-a", errors.New(`User "system:serviceaccount:kubehz-system:kubehz-actor" cannot patch`))
	cases := []struct {
		name     string
		err      error
		want     wire.Action
		wantHalt bool
	}{
		{"success keeps the in-progress report", nil, step.Action, false},
		{"a conflict is a stale read, no halt", apierrors.NewConflict(mdResource, "pool-a", errors.New("modified")), stale, false},
		{"a vanished MD is a stale read, no halt", apierrors.NewNotFound(mdResource, "pool-a"), stale, false},
		{"forbidden fails with the RBAC hint and halts", forbidden, report("pool-a", wire.StatusFailed,
			`patch failed: RBAC: the actor's Role (deploy/actor) must grant patch on machinedeployments.cluster.k8s.io in namespace "kube-system": `+forbidden.Error()), true},
		{"another error fails and halts", apierrors.NewInternalError(errors.New("etcd\nleader changed")),
			report("pool-a", wire.StatusFailed, "patch failed: Internal error occurred: etcd leader changed"), true},
		{"a long error is cut at 160 code points", errors.New(strings.Repeat("x", 300)),
			report("pool-a", wire.StatusFailed, "patch failed: "+strings.Repeat("x", 160)+"…"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, halt := Outcome(step, tc.err)
			if a != tc.want || halt != tc.wantHalt {
				t.Errorf("Outcome = %+v, %v\nwant %+v, %v", a, halt, tc.want, tc.wantHalt)
			}
		})
	}
}

func TestUpgrade_OutcomeWithoutPatchIsTheStepItself(t *testing.T) {
	step := Step{Action: report("pool-a", wire.StatusDone, "v1.34.9 → v1.35.6 (2/2)")}
	if a, halt := Outcome(step, errors.New("ignored")); a != step.Action || halt {
		t.Fatalf("Outcome = %+v, %v", a, halt)
	}
}

func TestUpgrade_PatchBodySetsOnlyTheKubeletUnderTheDecidedResourceVersion(t *testing.T) {
	p := Patch{MDPatch: refuse.MDPatch{MD: "pool-a", ResourceVersion: "123"}, From: oldV, Target: newV}
	if got, want := string(p.Body()), `{"metadata":{"resourceVersion":"123"},"spec":{"template":{"spec":{"versions":{"kubelet":"v1.35.6"}}}}}`; got != want {
		t.Errorf("Body = %s\nwant %s", got, want)
	}
	p.ResourceVersion = ""
	if got, want := string(p.Body()), `{"spec":{"template":{"spec":{"versions":{"kubelet":"v1.35.6"}}}}}`; got != want {
		t.Errorf("Body without rv = %s\nwant %s", got, want)
	}
}

func TestUpgrade_StartedRemembersTheFromOfASuccessfulPatch(t *testing.T) {
	mem := RolledFrom{}
	Started(mem, &Patch{MDPatch: refuse.MDPatch{MD: "pool-a"}, From: oldV, Target: newV})
	Started(mem, nil)
	Started(nil, &Patch{MDPatch: refuse.MDPatch{MD: "pool-b"}, From: oldV})
	if len(mem) != 1 || mem["pool-a"] != oldV {
		t.Fatalf("memory = %v, want pool-a from %s", mem, oldV)
	}
}

func TestUpgrade_QueuedIsPendingBehindAnEarlierFailure(t *testing.T) {
	want := report("pool-b", wire.StatusPending, "queued behind an earlier failure in this pass; will retry next poll")
	if got := Queued("pool-b", testRev); got != want {
		t.Fatalf("Queued = %+v, want %+v", got, want)
	}
}

// TestUpgrade_NilRolledFromRemembersNothing: a plan without memory still decides.
func TestUpgrade_NilRolledFromRemembersNothing(t *testing.T) {
	o := Observed{ControlPlane: cpV, MDs: mdsOf(worker("pool-a", newV, 2)), Machines: []Machine{joined("pool-a-1", "pool-a", oldV)}}
	steps, retry := Plan(o, policyFor(newV, "pool-a"), nil)
	want := report("pool-a", wire.StatusInProgress, "v1.34.9 → v1.35.6 (0/2)")
	if len(steps) != 1 || steps[0].Action != want || !retry {
		t.Fatalf("Plan = %+v, %v", steps, retry)
	}
}
