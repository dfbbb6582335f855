package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
)

// machineKinds are the resources only machine-controller (and the test, as
// the cluster's admin, or the actor) may write: never the simulator.
var machineKinds = map[string]bool{"machinedeployments": true, "machinesets": true, "machines": true}

// simulatorMachineWrites are the audited writes the simulator made to
// MachineDeployments, MachineSets or Machines since since.
func simulatorMachineWrites(events []kube.AuditEvent, since time.Time) []string {
	var out []string
	for _, e := range events {
		if e.Actor() == clustersim.SimulatorUser && mutating[e.Verb] && machineKinds[e.Resource()] && !e.RequestReceived.Before(since) {
			out = append(out, fmt.Sprintf("%s %s %s", e.Verb, e.Resource(), e.ObjectRef.Name))
		}
	}
	return out
}

// Given every reason to act on machines (a new pool, a scale-up, a kubelet
// roll, a deleted Machine), the simulator writes Nodes, Leases and pods, and
// machine-controller writes the MachineSets and Machines; the simulator
// itself writes none of machine-controller's resources.
func TestWorld_TheSimulatorNeverWritesMachineResources(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	ctx := ctxT(t)
	if err := world.CreatePool(ctx, "pool-a", 1, clustersim.PoolOptions{Kubelet: "v1.35.5"}); err != nil {
		t.Fatal(err)
	}
	converged := func(what string) {
		t.Helper()
		kube.WaitUntil(t, what, func() bool {
			ok, err := world.Converged(ctx, "pool-a")
			return err == nil && ok
		})
	}
	converged("pool-a at 1 Ready Machine")
	patch := `{"spec":{"replicas":2,"template":{"spec":{"versions":{"kubelet":"v1.35.6"}}}}}`
	if _, err := mds.Patch(ctx, "pool-a", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	converged("pool-a rolled to v1.35.6 at 2 Ready Machines")
	ms, err := world.Machines(ctx, "pool-a")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	machines := dyn.Resource(clustersim.MachinesGVR).Namespace("kube-system")
	if err := machines.Delete(ctx, ms[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "a replacement for "+ms[0].Name, func() bool {
		now, err := world.Machines(ctx, "pool-a")
		if err != nil || len(now) != 2 {
			return false
		}
		for _, m := range now {
			if m.Name == ms[0].Name || !m.Ready {
				return false
			}
		}
		return true
	})

	events, err := kube.ReadAudit(suite.auditLog, 0)
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]int{}
	for _, e := range events {
		if !e.RequestReceived.Before(start) && mutating[e.Verb] {
			wrote[e.Actor()+" "+e.Resource()]++
		}
	}
	// The control: both writers were busy, each on its own kind.
	for _, want := range []string{
		clustersim.SimulatorUser + " nodes", clustersim.SimulatorUser + " leases",
		kube.MachineControllerUser + " machinesets", kube.MachineControllerUser + " machines",
	} {
		if wrote[want] == 0 {
			t.Errorf("no write by %s since the test began; writes: %v", want, wrote)
		}
	}
	if got := simulatorMachineWrites(events, start); len(got) > 0 {
		t.Errorf("the simulator wrote machine-controller's resources: %v", got)
	}
}
