package clustersim

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSim_DeadNodeDrainWedgesUntilPodsForceDeleted(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("iota", 2, PoolOptions{})
	h.converge("iota")
	ms := h.machineInfos("iota")
	live, dead := ms[0], ms[1]
	for _, m := range ms {
		placed, err := h.sim.PlacePods(t.Context(), m.Node, 2, h.ns)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"sim-" + m.Node + "-0", "sim-" + m.Node + "-1"}; !slices.Equal(placed, want) {
			t.Errorf("placed %v, want %v", placed, want)
		}
	}
	if err := h.sim.SetNodeCondition(t.Context(), dead.Node, corev1.ConditionUnknown, time.Now().Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}

	// Both Machines deleted, as the actor's healer would.
	for _, m := range ms {
		if err := h.dyn.Resource(MachinesGVR).Namespace(h.ns).Delete(t.Context(), m.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The control: a Ready Node's kubelet confirms the evictions, so its
	// drain finishes and the Node and Machine go.
	h.eventually("Machine on the Ready Node drained and gone", 10*time.Second, h.machineGone(live.Name))
	if pods := h.podsOn(live.Node); len(pods) != 0 {
		t.Errorf("pods left on the drained Node: %+v", pods)
	}
	// The passes that finished that drain also evicted the dead Node's
	// pods; nothing confirms them there.
	h.eventually("pods on the dead Node Terminating", 5*time.Second, func() (bool, error) {
		pods := h.podsOn(dead.Node)
		return len(pods) == 2 && pods[0].Terminating && pods[1].Terminating, nil
	})
	h.eventually("replacements join beside the wedged Machine", 10*time.Second, func() (bool, error) {
		return h.statusCount("iota", "replicas") == 2 && h.statusCount("iota", "readyReplicas") == 2, nil
	})
	m := h.machines("iota")[dead.Name]
	if m == nil || m.GetDeletionTimestamp() == nil || !slices.Contains(m.GetFinalizers(), Finalizer) || h.node(dead.Node) == nil {
		t.Fatalf("Machine %s on the dead Node: %v, Node present %t; want it deleting, held by the drain", dead.Name, m, h.node(dead.Node) != nil)
	}

	// The actor's unwedge: grace 0, pinned to the UID it saw.
	zero := int64(0)
	for _, pod := range h.podsOn(dead.Node) {
		opts := metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}
		if err := env.Client.CoreV1().Pods(pod.Namespace).Delete(t.Context(), pod.Name, opts); err != nil {
			t.Fatal(err)
		}
	}
	h.eventually("Machine on the dead Node gone after the force-delete", 10*time.Second, h.machineGone(dead.Name))
}

func TestSim_ReadyNodeKubeletConfirmsGracefulPodDelete(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("kappa", 1, PoolOptions{})
	h.converge("kappa")
	node := h.machineInfos("kappa")[0].Node
	placed, err := h.sim.PlacePods(t.Context(), node, 1, h.ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.CoreV1().Pods(h.ns).Delete(t.Context(), placed[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the graceful delete confirmed", 5*time.Second, func() (bool, error) {
		return len(h.podsOn(node)) == 0, nil
	})
	// A second placement on the same Node takes the lowest free name.
	again, err := h.sim.PlacePods(t.Context(), node, 2, h.ns)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sim-" + node + "-0", "sim-" + node + "-1"}; !slices.Equal(again, want) {
		t.Errorf("placed %v, want %v", again, want)
	}
}

// podsOn is PodsOn, failing the test on error.
func (h *harness) podsOn(node string) []PodInfo {
	h.t.Helper()
	pods, err := h.sim.PodsOn(h.t.Context(), node)
	if err != nil {
		h.t.Fatal(err)
	}
	return pods
}
