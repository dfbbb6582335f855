package e2e

import (
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// machine-controller's own -join-cluster-timeout deletes Machines that never
// join, the job of the actor's joinless heal. With both armed on the same
// joinless Machines, within a second of each other (the controller's 30 s
// timeout is checked on its one-minute requeue; the actor's startup window
// is 60 s), each Machine is deleted once: the actor never deletes one the
// controller already deleted, and never reports as its own a delete the
// controller made. The pool's servers never boot (a fault of the simulated
// cloud), so every replacement is joinless too and the race repeats.
func TestHeal_TheControllersJoinTimeoutAndTheActorNeverDeleteAMachineTwice(t *testing.T) {
	start := time.Now()
	world, _ := machineWorldWith(t, clustersim.Options{JoinDelay: 300 * time.Millisecond},
		kube.ControllerOptions{JoinClusterTimeout: 30 * time.Second})
	ctx := ctxT(t)
	world.HoldJoins("pool-b", true)
	if err := world.CreatePool(ctx, "pool-b", 2, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 7, Execution: map[string]any{"healing": true}, Healing: healPolicy(2),
		WorkerPools: []desiredPool{{Name: "pool-b", DesiredReplicas: 2}}}, `"7-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	actor := startActor(t, sim, "actor-join")

	// Until three Machines were deleted (about three generations of
	// joinless ones) and the actor decided to delete at least one: either
	// it sent its delete, or it decided on the cache and then, on the
	// direct read every delete waits for, found the controller's delete
	// already made. Which side wins each race is timing; that both ran is
	// the control.
	var deletes joinDeletes
	overturned := 0
	waitFor(t, "three joinless Machines deleted, and the actor deciding to delete one", 8*time.Minute, func() bool {
		time.Sleep(2 * time.Second) // the audit log is read whole each time
		deletes = readJoinDeletes(t, start)
		overturned = strings.Count(actor.Output(), "A fresh read changed the heal decision")
		return len(deletes.byMachine) >= 3 && (deletes.actorTried > 0 || overturned > 0)
	})
	world.HoldJoins("pool-b", false)
	waitFor(t, "pool-b has 2 Ready workers once its servers boot", 3*time.Minute,
		func() bool { return readyReplacement(t, world, "pool-b", 2, "") })
	deletes = readJoinDeletes(t, start)
	byMachine := deletes.byMachine

	// "Already deleted" is a controller delete that had completed before the
	// actor's request arrived. The audit log lists records as responses
	// complete, so two overlapping deletes may be listed in either order;
	// between those, etcd decides, and the actor's resourceVersion
	// precondition makes its delete fail if the controller's came first.
	for _, e := range deletes.accepted {
		d := byMachine[e.ObjectRef.Name]
		if e.Actor() == kube.ActorUser && d.controller > 0 && d.controllerDone.Before(e.RequestReceived) {
			t.Errorf("the actor deleted Machine %s at %s, after machine-controller's delete had completed at %s",
				e.ObjectRef.Name, e.RequestReceived.Format(time.RFC3339Nano), d.controllerDone.Format(time.RFC3339Nano))
		}
	}
	t.Logf("accepted Machine deletes, in order: %v", deletes.order)
	var byActor, byController int
	for name, d := range byMachine {
		if d.actor > 1 {
			t.Errorf("the actor deleted Machine %s %d times", name, d.actor)
		}
		if d.actor > 0 {
			byActor++
		}
		if d.controller > 0 && d.actor == 0 {
			byController++
		}
	}
	t.Logf("the actor sent %d Machine deletes, landed or refused, and dropped %d decisions on a fresh read",
		deletes.actorTried, overturned)
	t.Logf("%d Machines deleted by the actor, %d by machine-controller alone", byActor, byController)

	// No report claims a delete the actor did not make.
	for _, b := range sim.Beats() {
		for _, a := range actionsOf(b) {
			if a.Type != "heal" || a.Status != "done" || !strings.HasPrefix(a.Detail, "deleted Machine") {
				continue
			}
			if d := byMachine[a.Target]; d == nil || d.actor == 0 {
				t.Errorf("report %+v claims a delete, but the actor's delete of %s was never accepted", a, a.Target)
			}
		}
	}
}

// joinDeletes is what the audit log shows of the Machine deletes since a
// test's start.
type joinDeletes struct {
	byMachine  map[string]*machineDeletes
	accepted   []kube.AuditEvent
	order      []string // "actor name" of each accepted delete, in log order
	actorTried int      // the actor's Machine deletes, accepted or refused
}

type machineDeletes struct {
	actor, controller int
	controllerDone    time.Time // when the controller's first accepted delete completed
}

func readJoinDeletes(t *testing.T, start time.Time) joinDeletes {
	t.Helper()
	events, err := kube.ReadAudit(suite.auditLog, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := joinDeletes{byMachine: map[string]*machineDeletes{}}
	for _, e := range events {
		if e.RequestReceived.Before(start) || e.Verb != "delete" || e.Resource() != "machines" {
			continue
		}
		if e.Actor() == kube.ActorUser {
			out.actorTried++
		}
		if e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		d := out.byMachine[e.ObjectRef.Name]
		if d == nil {
			d = &machineDeletes{}
			out.byMachine[e.ObjectRef.Name] = d
		}
		switch e.Actor() {
		case kube.ActorUser:
			d.actor++
		case kube.MachineControllerUser:
			d.controller++
			if d.controllerDone.IsZero() || e.StageTimestamp.Before(d.controllerDone) {
				d.controllerDone = e.StageTimestamp
			}
		}
		out.accepted = append(out.accepted, e)
		out.order = append(out.order, e.Actor()+" "+e.ObjectRef.Name)
	}
	return out
}
