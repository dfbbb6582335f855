package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestFaults_APIServerRestartWithCompaction runs both binaries on a control
// plane of their own whose apiserver compacts etcd every 5 s, changes the
// cluster, compacts etcd to its current revision and restarts the apiserver
// (down for 2 s). Both binaries must live through it; their informers
// relist (no watch can resume from a compacted revision); the beat then
// converges on changes made after the restart, acting resumes on a new
// revision, and no revision is acted on twice: a change made behind the
// actor's back after revision 1 is left alone until revision 2.
func TestFaults_APIServerRestartWithCompaction(t *testing.T) {
	dir := t.TempDir()
	flags, audit, err := kube.AuditFlags(dir, auditPolicy)
	if err != nil {
		t.Fatal(err)
	}
	flags["etcd-compaction-interval"] = []string{"5s"}
	env, err := kube.Start(kube.Options{APIServerArgs: flags})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop the restart test's control plane: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	observerKC, actorKC, err := env.DeployAgents(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mds := restartWorld(t, env)

	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 1, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 2}}}, `"1-100"`); err != nil {
		t.Fatal(err)
	}
	observer, _ := startObserver(t, sim, "KUBECONFIG="+observerKC)
	actor := startActor(t, sim, "actor-restart", "KUBECONFIG="+actorKC)
	kube.WaitUntil(t, "pool-a scaled to 2", func() bool { return replicasAt(t, mds, "pool-a") == 2 })
	waitBeat(t, sim, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "scale", "pool-a")
		return ok && a.Revision == 1 && a.Status == "done"
	})
	// Acting again on a revision the cluster still matches writes nothing,
	// so it would leave no trace. Someone scales pool-a to 4 behind the
	// actor's back: acting on revision 1 again would patch it back to 2.
	if _, err := mds.Patch(ctx, "pool-a", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// Enough writes, spread over two compaction intervals, that the
	// revisions the informers last saw are compacted away.
	nodes := env.Client.CoreV1().Nodes()
	for i := range 24 {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%02d", i)}}
		if _, err := nodes.Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := nodes.Delete(ctx, fmt.Sprintf("churn-%02d", i-1), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	rev, err := env.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted to revision %d", rev)
	restarted := time.Now()
	if err := env.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("apiserver back %s after the stop", time.Since(restarted).Truncate(time.Millisecond))

	// Converge: a node created after the restart reaches the beat, and the
	// nodes deleted before it are gone from it.
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "after-restart"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seq := sim.Seq()
	converged := waitBeatWithin(t, sim, 60*time.Second, func(b platformsim.Beat) bool {
		names := nodeNames(b)
		return b.Seq > seq && names["after-restart"] && !names["churn-00"] && names["churn-23"]
	})
	t.Logf("beat converged %s after the restart", converged.Time.Sub(restarted).Truncate(time.Millisecond))

	// An actor that could not renew its lease while the apiserver was away
	// exits (code 1) so the kubelet restarts it as a standby; do the
	// kubelet's part. Anything else is a crash. The new process remembers
	// nothing of the old one's acts and acts on revision 1 once more: one
	// patch, back to 2 replicas.
	wantPatches := 2
	if actor.Exited() {
		code, _ := actor.Wait(0)
		actor.Ended()
		if code != 1 || !strings.Contains(actor.Output(), "lost the actor lease") {
			t.Fatalf("the actor exited with code %d, not for a lost lease:\n%s", code, tail(actor.Output(), 3000))
		}
		t.Logf("the actor lost its lease during the restart and exited to start over; restarting it as the kubelet would")
		actor = startActor(t, sim, "actor-restart-2", "KUBECONFIG="+actorKC)
		wantPatches = 3
		kube.WaitUntil(t, "the restarted actor acts on revision 1", func() bool { return replicasAt(t, mds, "pool-a") == 2 })
	} else if got := replicasAt(t, mds, "pool-a"); got != 4 {
		t.Errorf("pool-a is at %d replicas after the restart, not the 4 set behind the actor's back: revision 1 was acted on twice", got)
	}

	// Acting resumes.
	if err := sim.SetDesired(desiredDoc{Revision: 2, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 3}}}, `"2-100"`); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "pool-a scaled to 3 after the restart", func() bool { return replicasAt(t, mds, "pool-a") == 3 })

	if observer.Exited() || actor.Exited() {
		t.Fatalf("a binary exited (observer %v, actor %v)", observer.Exited(), actor.Exited())
	}
	patches := 0
	for _, e := range auditRequests(t, audit, kube.ActorUser, time.Time{}) {
		if e.Verb == "patch" && e.Resource() == "machinedeployments" && e.ResponseStatus != nil && e.ResponseStatus.Code < 300 {
			patches++
		}
	}
	if patches != wantPatches {
		t.Errorf("%d successful MachineDeployment patches, want %d: one per revision and process", patches, wantPatches)
	}
	// A relist is a LIST, or a watch that streams the initial state. After
	// a restart client-go's reflectors relist whether or not the revision
	// they held is still served (a run without the compaction relisted the
	// same ten watches); the compaction makes sure none could have resumed
	// from a revision etcd no longer has (410 Gone).
	relists := 0
	for _, e := range auditRequests(t, audit, kube.ObserverUser, restarted) {
		if e.Verb == "list" || e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true") {
			relists++
		}
	}
	t.Logf("after the restart the observer relisted %d times", relists)
	if relists == 0 {
		t.Errorf("the observer never relisted after the restart")
	}
}

// restartWorld is machineWorld on another control plane: the CRDs, the
// real controllers and the simulated cloud with one pool, pool-a, at one
// replica. The control plane is the test's own, so nothing is cleaned up
// but the processes.
func restartWorld(t *testing.T, env *kube.Env) dynamic.ResourceInterface {
	t.Helper()
	if _, err := env.InstallCRDs(kube.MachineCRDs); err != nil {
		t.Fatal(err)
	}
	sim, err := clustersim.StartWorld(ctxT(t), env, t.TempDir(), clustersim.Options{JoinDelay: 300 * time.Millisecond}, kube.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(sim.Controllers.PostMortem())
		}
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := sim.CreatePool(ctxT(t), "pool-a", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(clustersim.MachineDeploymentsGVR).Namespace("kube-system")
}

func replicasAt(t *testing.T, mds dynamic.ResourceInterface, name string) int64 {
	t.Helper()
	u, err := mds.Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		return -1 // the apiserver may be restarting
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

// waitBeatWithin waits up to limit for an accepted beat that match accepts.
func waitBeatWithin(t *testing.T, sim *platformsim.Server, limit time.Duration, match func(platformsim.Beat) bool) platformsim.Beat {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	b, err := sim.WaitBeat(ctx, match)
	if err != nil {
		t.Fatalf("no matching beat within %s: %v", limit, err)
	}
	return b
}

func nodeNames(b platformsim.Beat) map[string]bool {
	out := map[string]bool{}
	nodes, _ := b.Payload["nodes"].([]any)
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				out[name] = true
			}
		}
	}
	return out
}
