package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestActor_StaleReadIsRefusedAndDecidedAgain makes the actor itself decide
// on a stale read. Its view of the cluster is frozen (the proxy it dials
// through holds every answer and watch event, while its requests still
// flow), someone else changes the MachineDeployment, and the platform asks
// for a new size. The actor decides on its cached copy, its patch carries
// that copy's resourceVersion, and the real apiserver refuses it with 409;
// on the next tick the actor decides again on the fresh object and the
// patch lands, keeping the other writer's change.
func TestActor_StaleReadIsRefusedAndDecidedAgain(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-s", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 80, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-s", DesiredReplicas: 2}}}, `"80-100"`); err != nil {
		t.Fatal(err)
	}
	proxy, kubeconfig := proxiedActorKubeconfig(t)
	startActor(t, sim, "actor-stale", "KUBECONFIG="+kubeconfig)
	// Pause only once the pass is over (its report published), so no step
	// of revision 80 waits on a held answer.
	kube.WaitUntil(t, "revision 80 done", func() bool { return replicasOf(t, mds, "pool-s") == 2 && reportsDone(t, 80) })

	// Only the log written from the pause on is read while the answers are
	// held: the whole log is long by now, and the fence allows a write 10 s
	// after the last renewal, which the pause also holds.
	logged, err := os.Stat(suite.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	proxy.PauseAnswers()
	paused := true
	defer func() {
		if paused {
			proxy.ResumeAnswers()
		}
	}()
	// Another writer changes the MachineDeployment; the actor does not see it.
	if _, err := mds.Patch(ctxT(t), "pool-s", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"touched-by":"someone-else"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	seq := sim.Seq()
	if err := sim.SetDesired(desiredDoc{Revision: 81, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-s", DesiredReplicas: 3}}}, `"81-100"`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	served, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool {
		return r.Seq > seq && r.Endpoint == platformsim.EndpointDesired && r.Status == 200
	})
	if err != nil {
		t.Fatal(err)
	}
	// The decision is made on the cached copy; its fence then reads the
	// Lease (renewals update it without reading it) and waits for the
	// answer. Resume once the apiserver has received that read: the decision
	// was made on the frozen view.
	kube.WaitUntil(t, "the write fence's read of the Lease", func() bool {
		events, err := kube.ReadAudit(suite.auditLog, logged.Size())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.User.Username == kube.ActorUser && !e.RequestReceived.Before(served.Time) && request("get", "leases", "kubehz-actor")(e) {
				return true
			}
		}
		return false
	})
	proxy.ResumeAnswers()
	paused = false

	kube.WaitUntil(t, "pool-s scaled to 3 after deciding again", func() bool { return replicasOf(t, mds, "pool-s") == 3 })
	var codes []int
	for _, e := range actorRequests(t, start) {
		if e.Verb == "patch" && e.Resource() == "machinedeployments" && e.ObjectRef.Name == "pool-s" && e.ResponseStatus != nil {
			codes = append(codes, e.ResponseStatus.Code)
		}
	}
	// 2 for revision 80; then the stale 409 and the patch decided again.
	if len(codes) != 3 || codes[0] != 200 || codes[1] != 409 || codes[2] != 200 {
		t.Fatalf("the actor's patches of pool-s answered %v, want [200 409 200]", codes)
	}
	md, err := mds.Get(ctxT(t), "pool-s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if md.GetLabels()["touched-by"] != "someone-else" {
		t.Errorf("the other writer's label was lost: %v", md.GetLabels())
	}
	if !reportsDone(t, 81) {
		t.Errorf("revision 81 does not end done in the reports")
	}
}
