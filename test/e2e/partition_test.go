package e2e

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestFaults_PartitionedLeaderExitsAndTheStandbyActs cuts the leading actor
// off from the apiserver (the proxy it dials through is stopped) and then
// gives the actors a reason to write: a new revision, which the cut leader
// still fetches from the platform. The cut leader must give up once its
// lease is lost and exit (so its pod restarts as a standby), and the
// standby must take over and act. That nothing of the cut leader's reaches
// the apiserver after the cut is checked too, but a stopped proxy makes it
// so by itself; that a deposed leader able to reach the apiserver again
// starts nothing and lands no write is TestActor_FrozenLeader's proof.
func TestFaults_PartitionedLeaderExitsAndTheStandbyActs(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-a", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 70, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 2}}}, `"70-100"`); err != nil {
		t.Fatal(err)
	}
	proxy, kubeconfig := proxiedActorKubeconfig(t)
	cut := startActor(t, sim, "actor-cut", "KUBECONFIG="+kubeconfig)
	kube.WaitUntil(t, "actor-cut leads and scales pool-a to 2", func() bool {
		return strings.HasPrefix(leaseHolder(t), "actor-cut_") && replicasOf(t, mds, "pool-a") == 2
	})
	startActor(t, sim, "actor-other")

	proxy.Stop()
	partitioned := time.Now()
	if err := sim.SetDesired(desiredDoc{Revision: 71, Execution: map[string]any{"scaling": true},
		WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 3}}}, `"71-100"`); err != nil {
		t.Fatal(err)
	}
	code, err := cut.Wait(45 * time.Second)
	if err != nil {
		t.Fatalf("the partitioned leader did not exit: %v", err)
	}
	cut.Ended()
	t.Logf("the partitioned leader exited %s after the cut", time.Since(partitioned).Truncate(time.Millisecond))
	if code != 1 || !strings.Contains(cut.Output(), "lost the actor lease") {
		t.Errorf("exit code %d; want 1 for a lost lease:\n%s", code, tail(cut.Output(), 3000))
	}
	kube.WaitUntil(t, "the standby scales pool-a to 3", func() bool { return replicasOf(t, mds, "pool-a") == 3 })
	if h := leaseHolder(t); !strings.HasPrefix(h, "actor-other_") {
		t.Errorf("lease held by %q, want the standby", h)
	}
	for _, e := range actorRequests(t, start) {
		if strings.HasPrefix(e.Process(), "actor-cut_") && mutating[e.Verb] && e.RequestReceived.After(partitioned) {
			t.Errorf("the partitioned leader's %s %s/%s reached the apiserver after the cut", e.Verb, e.Resource(), e.ObjectRef.Name)
		}
	}
}

// proxiedActorKubeconfig is the actor's kubeconfig with the apiserver
// reached through a proxy of the test's own.
func proxiedActorKubeconfig(t *testing.T) (*kube.Proxy, string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(suite.actorKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var proxy *kube.Proxy
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		if proxy, err = kube.StartProxy(u.Host); err != nil {
			t.Fatal(err)
		}
		u.Host = proxy.Addr()
		c.Server = u.String()
	}
	t.Cleanup(proxy.Stop)
	path := filepath.Join(t.TempDir(), "actor-proxied.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return proxy, path
}
