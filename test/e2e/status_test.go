package e2e

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// subcommand runs bin with args as kubectl exec would, a separate process
// with the container's environment; it returns the exit code and output.
func subcommand(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// observerState is the state file's JSON as `observer status --json` prints it.
type observerState struct {
	Beating      bool   `json:"beating"`
	LastOutcome  string `json:"lastOutcome"`
	FailingSince string `json:"failingSince"`
	Caches       struct {
		Nodes, Pods int
	} `json:"caches"`
}

func TestObserver_StatusPrintsTheLiveState(t *testing.T) {
	createNode(t, nodeSpec{name: "status-node", ready: corev1.ConditionTrue})
	createNamespace(t, "status-fixture")
	createPod(t, "status-fixture", "status-pod", corev1.PodRunning)
	sim := startSim(t, platformsim.Options{})
	env := []string{"KUBEHZ_LIVENESS_FILE=" + filepath.Join(t.TempDir(), "alive")}
	startObserver(t, sim, env...)
	waitBeat(t, sim, func(b platformsim.Beat) bool { _, ok := decode(b).node("status-node"); return ok })

	nodes, err := suite.env.Client.CoreV1().Nodes().List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := suite.env.Client.CoreV1().Pods("").List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var st observerState
	kube.WaitUntil(t, "the state file shows a delivered beat and the fixture's counts", func() bool {
		code, out := subcommand(t, suite.observerBin, env, "status", "--json")
		st = observerState{}
		return code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.LastOutcome == "delivered" &&
			st.Caches.Nodes == len(nodes.Items) && st.Caches.Pods == len(pods.Items)
	})
	if !st.Beating || st.FailingSince != "" {
		t.Errorf("state %+v: want beating and no failure streak", st)
	}
	code, out := subcommand(t, suite.observerBin, env, "status")
	if code != 0 {
		t.Fatalf("observer status exited %d: %s", code, out)
	}
	for _, want := range []string{"heartbeat:       sent by this observer", ", delivered\n", "nodes:           "} {
		if !strings.Contains(out, want) {
			t.Errorf("observer status lacks %q:\n%s", want, out)
		}
	}
	code, out = subcommand(t, suite.observerBin, []string{"KUBEHZ_LIVENESS_FILE=" + filepath.Join(t.TempDir(), "alive")}, "status")
	if code != 1 || !strings.Contains(out, "has not started yet") {
		t.Errorf("status without a state file exited %d: %s", code, out)
	}
}

func TestObserver_ReadinessFailsDuringAPlatformOutageAndRecovers(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	env := []string{"KUBEHZ_LIVENESS_FILE=" + filepath.Join(t.TempDir(), "alive"), "KUBEHZ_READY_AFTER_FAILING=3s"}
	startObserver(t, sim, env...)
	waitBeat(t, sim, nil)
	ready := func() (bool, string) {
		code, out := subcommand(t, suite.observerBin, env, "ready")
		return code == 0, out
	}
	kube.WaitUntil(t, "ready after the first beat", func() bool { ok, _ := ready(); return ok })

	seq := sim.Seq()
	sim.SetFault(platformsim.Fault{Endpoint: platformsim.EndpointHeartbeat, Status: 503})
	var out string
	var notReady time.Time
	kube.WaitUntil(t, "not ready once delivery failed for longer than 3 s", func() bool {
		var ok bool
		ok, out = ready()
		notReady = time.Now()
		return !ok
	})
	// The failing streak began with the first 503, stamped by the simulator
	// as it arrived, before the observer heard the answer; the probe that
	// first said "not ready" had read the state by the time it returned.
	// Both stamps are this process's clock, and each errs only in the
	// observer's favour, so 3 s is checked with no margin.
	first, err := sim.WaitRequest(ctxT(t), func(r platformsim.Request) bool {
		return r.Seq > seq && r.Endpoint == platformsim.EndpointHeartbeat && r.Faulted
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := notReady.Sub(first.Time); took < 3*time.Second {
		t.Errorf("not ready %s after the first failed delivery, before the 3 s threshold", took)
	}
	if !strings.Contains(out, "HTTP 503") {
		t.Errorf("the probe's message does not say what failed: %s", out)
	}

	sim.ClearFault()
	kube.WaitUntil(t, "ready again after the platform recovered", func() bool { ok, _ := ready(); return ok })
	waitBeat(t, sim, nil)
}

// actorState is the state file's JSON as `actor status --json` prints it.
type actorState struct {
	Leading     bool   `json:"leading"`
	Identity    string `json:"identity"`
	LeaseHolder string `json:"leaseHolder"`
	Revision    int64  `json:"revision"`
	Reports     []struct {
		Action, Pool, Status, Detail string
	} `json:"reports"`
}

func TestActor_StatusShowsTheLeaderItsRevisionAndReports(t *testing.T) {
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-a", 2, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 7, WorkerPools: []desiredPool{{Name: "pool-a", MachineType: "cpx31", DesiredReplicas: 3}},
		Execution: map[string]any{"scaling": true}}, `"7-100"`); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBEHZ_LIVENESS_FILE=" + filepath.Join(t.TempDir(), "alive")}
	startObserver(t, sim)
	startActor(t, sim, "actor-status", env...)
	kube.WaitUntil(t, "pool-a patched to 3", func() bool { return replicasOf(t, mds, "pool-a") == 3 })

	var st actorState
	kube.WaitUntil(t, "actor status shows the leader with revision 7 and a done scale of pool-a", func() bool {
		code, out := subcommand(t, suite.actorBin, env, "status", "--json")
		st = actorState{}
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Leading || st.Revision != 7 {
			return false
		}
		for _, r := range st.Reports {
			if r.Action == "scale" && r.Pool == "pool-a" && r.Status == "done" {
				return true
			}
		}
		return false
	})
	if st.LeaseHolder != st.Identity || !strings.HasPrefix(st.Identity, "actor-status_") {
		t.Errorf("lease holder %q, identity %q: want this replica", st.LeaseHolder, st.Identity)
	}
	code, out := subcommand(t, suite.actorBin, env, "status")
	if code != 0 {
		t.Fatalf("actor status exited %d: %s", code, out)
	}
	for _, want := range []string{"leading:              yes", "revision:             7", "  scale  pool-a  done  replicas 2 to 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("actor status lacks %q:\n%s", want, out)
		}
	}
}
