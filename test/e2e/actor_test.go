package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// machineWorld installs machine-controller's CRDs and runs, for one test,
// the real controllers (kube-controller-manager, machine-controller and its
// webhook) and the simulated cloud and kubelets, Nodes registering 300 ms
// after their servers are created.
func machineWorld(t *testing.T) (*clustersim.World, dynamic.ResourceInterface) {
	t.Helper()
	return machineWorldJoiningAfter(t, 300*time.Millisecond)
}

// machineWorldJoiningAfter is machineWorld with Nodes registering join
// after their servers are created.
func machineWorldJoiningAfter(t *testing.T, join time.Duration) (*clustersim.World, dynamic.ResourceInterface) {
	t.Helper()
	return machineWorldWith(t, clustersim.Options{JoinDelay: join}, kube.ControllerOptions{})
}

// machineWorldWith is machineWorld with the simulator and the controllers
// tuned.
func machineWorldWith(t *testing.T, opts clustersim.Options, ctrl kube.ControllerOptions) (*clustersim.World, dynamic.ResourceInterface) {
	t.Helper()
	crds, err := suite.env.InstallCRDs(kube.MachineCRDs)
	if err != nil {
		t.Fatal(err)
	}
	world, err := clustersim.StartWorld(ctxT(t), suite.env, t.TempDir(), opts, ctrl)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(world.Controllers.PostMortem())
		}
		bg, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := world.Close(bg, suite.env); err != nil {
			t.Error(err)
		}
		if err := suite.env.UninstallCRDs(crds); err != nil {
			t.Error(err)
		}
	})
	return world, dyn.Resource(clustersim.MachineDeploymentsGVR).Namespace("kube-system")
}

// startActor runs the built actor binary under the kubehz-actor identity;
// extra adds or overrides settings.
func startActor(t *testing.T, sim *platformsim.Server, pod string, extra ...string) *kube.Process {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "agent-token")
	writeToken(t, tokenFile, platformsim.DefaultToken)
	env := kube.AgentEnv{PlatformURL: sim.URL(), TokenFile: tokenFile, Kubeconfig: suite.actorKubeconfig,
		LivenessFile: filepath.Join(t.TempDir(), "alive"), Pod: pod}
	p, err := kube.StartProcess(suite.actorBin, append(env.List("KUBEHZ_DESIRED_POLL_SECONDS=1", "KUBEHZ_LOG_LEVEL=debug",
		// Healing's local floors at the contract's own, so the tests'
		// 60 s windows and zero cooldowns hold, not deploy/actor's
		// (600/600/300 s); heal_limits_test.go runs its in-flight limit.
		"KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS=0", "KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS=60",
		"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS=60"), extra...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.Killed() {
			return
		}
		assertNoListener(t, p)
		code, err := p.Stop(20 * time.Second)
		if err != nil || code != 0 {
			t.Errorf("actor %s did not stop cleanly (code %d, %v)", pod, code, err)
		}
		if strings.Contains(p.Output(), platformsim.DefaultToken) {
			t.Errorf("actor output contains the agent token")
		}
		if t.Failed() {
			t.Logf("actor %s output:\n%s", pod, tail(p.Output(), 6000))
		}
	})
	return p
}

type desiredDoc struct {
	Revision          int64          `json:"revision"`
	KubernetesVersion string         `json:"kubernetesVersion,omitempty"`
	WorkerPools       []desiredPool  `json:"workerPools"`
	Execution         map[string]any `json:"execution"`
	Healing           map[string]any `json:"healing,omitempty"`
}

type desiredPool struct {
	Name            string `json:"name"`
	MachineType     string `json:"machineType"`
	DesiredReplicas int64  `json:"desiredReplicas"`
}

type action struct {
	Type, Target, Status, Detail string
	Revision                     int64
}

func actionsOf(b platformsim.Beat) []action {
	var p struct {
		Actions []action `json:"actions"`
	}
	_ = json.Unmarshal(b.Body, &p)
	return p.Actions
}

func findAction(as []action, typ, target string) (action, bool) {
	for _, a := range as {
		if a.Type == typ && a.Target == target {
			return a, true
		}
	}
	return action{}, false
}

func replicasOf(t *testing.T, mds dynamic.ResourceInterface, name string) int64 {
	t.Helper()
	u, err := mds.Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

func TestActor_ScalesAnAuthorizedPool(t *testing.T) {
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-a", 2, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "pool-a converges at 2", func() bool { ok, _ := world.Converged(ctxT(t), "pool-a"); return ok })

	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 7, WorkerPools: []desiredPool{{Name: "pool-a", MachineType: "cpx31", DesiredReplicas: 3}},
		Execution: map[string]any{"scaling": true}}, `"7-100"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-a")

	kube.WaitUntil(t, "pool-a patched to 3", func() bool { return replicasOf(t, mds, "pool-a") == 3 })
	kube.WaitUntil(t, "pool-a converges at 3", func() bool { ok, _ := world.Converged(ctxT(t), "pool-a"); return ok })
	b := waitBeat(t, sim, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "scale", "pool-a")
		return ok && a.Status == "done" && a.Revision == 7
	})
	a, _ := findAction(actionsOf(b), "scale", "pool-a")
	if !strings.HasPrefix(a.Detail, "replicas 2 to 3") {
		t.Errorf("done detail %q does not say replicas 2 to 3", a.Detail)
	}
	evs, err := suite.env.Client.CoreV1().Events("kube-system").List(ctxT(t), metav1.ListOptions{
		FieldSelector: "involvedObject.name=pool-a,involvedObject.kind=MachineDeployment"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if e.Reason == "KubehzScaled" && strings.Contains(e.Message, "revision 7") && e.Type == corev1.EventTypeNormal {
			found = true
		}
	}
	if !found {
		t.Errorf("no KubehzScaled Event naming revision 7 on the MachineDeployment; got %d events", len(evs.Items))
	}
}
