package clustersim

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/kube"
)

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// With the real machine-controller, a new pool's Machines get servers from
// the simulated cloud, whose kubelets register Nodes the controller
// matches: every Machine ends with a nodeRef to a Ready Node.
func TestSim_NewPoolJoinsThroughTheRealController(t *testing.T) {
	sim := startWorld(t)
	ctx := ctxT(t, 3*time.Minute)
	if err := sim.CreatePool(ctx, "pool-a", 2, PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, sim, "pool-a")
	for _, m := range machines(t, sim, "pool-a") {
		if m.Node == "" || !m.Ready {
			t.Errorf("machine %s: node %q ready %v", m.Name, m.Node, m.Ready)
		}
	}
}

// A server whose kubelet stops is noticed by kube-controller-manager alone:
// after its grace period (20 s here) the Node turns Unknown and is tainted
// unreachable. A live control-plane Node stands beside it, as in a real
// cluster: with every Node silent, kube-controller-manager assumes its own
// connectivity failed and taints nothing.
func TestSim_AStoppedKubeletIsMarkedUnknownByKubeControllerManager(t *testing.T) {
	sim := startWorld(t)
	ctx := ctxT(t, 3*time.Minute)
	cp := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cp-1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}}}
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), "cp-1", metav1.DeleteOptions{}) })
	sim.KeepAlive("cp-1")
	if err := sim.CreatePool(ctx, "pool-a", 1, PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, sim, "pool-a")
	node := machines(t, sim, "pool-a")[0].Node
	if err := sim.StopKubelet(node); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "Node "+node+" Unknown and tainted unreachable", func() bool {
		n, err := env.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := readyCondition(n)
		tainted := false
		for _, taint := range n.Spec.Taints {
			tainted = tainted || (taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute)
		}
		return c != nil && c.Status == corev1.ConditionUnknown && tainted
	})
}

// The cloud refusing creates is a retried failure, not a final one: the
// Machine carries machine-controller's CreateError while the cloud says no,
// and gets its server and joins once the cloud accepts.
func TestSim_AFailedCreateRecoversWhenTheCloudAccepts(t *testing.T) {
	sim := startWorld(t)
	ctx := ctxT(t, 3*time.Minute)
	if err := sim.FailCreates("pool-a", "no capacity in fsn1"); err != nil {
		t.Fatal(err)
	}
	if err := sim.CreatePool(ctx, "pool-a", 1, PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "the Machine carries CreateError", func() bool {
		ms := machines(t, sim, "pool-a")
		return len(ms) == 1 && ms[0].ErrorReason == "CreateError"
	})
	if err := sim.FailCreates("pool-a", ""); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, sim, "pool-a")
	if ms := machines(t, sim, "pool-a"); ms[0].ErrorReason != "" {
		t.Errorf("the joined Machine still carries %q", ms[0].ErrorReason)
	}
}

// A stalled server deletion keeps its Machine deleting and its kubelet
// running; released, the Machine and its Node go.
func TestSim_StalledDeletesHoldTheMachineUntilReleased(t *testing.T) {
	sim := startWorld(t)
	ctx := ctxT(t, 3*time.Minute)
	if err := sim.CreatePool(ctx, "pool-a", 1, PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, sim, "pool-a")
	m := machines(t, sim, "pool-a")[0]
	if err := sim.StallDeletes("pool-a", true); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(MachinesGVR).Namespace(defaultNamespace).Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "a replacement joined beside the deleting Machine", func() bool {
		old, replacement, ok := deletingBeside(machines(t, sim, "pool-a"), m.Name)
		return ok && old.Deleting && replacement.Ready
	})
	time.Sleep(5 * time.Second) // a few of the controller's retries
	if ms := machines(t, sim, "pool-a"); len(ms) != 2 {
		t.Fatalf("while stalled: %+v, want the deleting Machine kept beside its replacement", ms)
	} else if old, _, ok := deletingBeside(ms, m.Name); !ok || !old.Ready {
		t.Fatalf("while stalled: %+v, want the deleting Machine kept with its Ready Node", ms)
	}
	if err := sim.StallDeletes("pool-a", false); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, "the deleted Machine and its Node gone", func() bool {
		_, err := env.Client.CoreV1().Nodes().Get(ctx, m.Node, metav1.GetOptions{})
		return len(machines(t, sim, "pool-a")) == 1 && apierrors.IsNotFound(err)
	})
}

// deletingBeside splits a pool of two Machines into the one named old and
// the other. Not by position: the MachineSet can create the replacement
// within the same second as the original, and the listing orders such
// Machines by name.
func deletingBeside(ms []MachineInfo, old string) (MachineInfo, MachineInfo, bool) {
	switch {
	case len(ms) != 2:
		return MachineInfo{}, MachineInfo{}, false
	case ms[0].Name == old:
		return ms[0], ms[1], true
	case ms[1].Name == old:
		return ms[1], ms[0], true
	}
	return MachineInfo{}, MachineInfo{}, false
}

func waitConverged(t *testing.T, sim *World, pool string) {
	t.Helper()
	kube.WaitUntil(t, pool+" converged", func() bool {
		ok, err := sim.Converged(context.Background(), pool)
		return err == nil && ok
	})
}

func machines(t *testing.T, sim *World, pool string) []MachineInfo {
	t.Helper()
	ms, err := sim.Machines(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
