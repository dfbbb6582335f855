package clustersim

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSim_ScaleUpConvergesWithReadyNodes(t *testing.T) {
	h := start(t, Options{}) // the default 1s JoinDelay
	h.createPool("alpha", 0, PoolOptions{ServerType: "cpx41", NodeLabels: map[string]string{"example.com/tier": "web"}})
	h.converge("alpha")

	h.scale("alpha", 3)
	h.converge("alpha")

	md := h.md("alpha")
	machines := h.machines("alpha")
	if len(machines) != 3 {
		t.Fatalf("%d Machines, want 3", len(machines))
	}
	// No Node joins before JoinDelay (1 s), on the apiserver's clock: its
	// creation stamps have whole seconds, and a Node made at least 1 s after
	// its Machine always falls in a later second.
	for _, m := range machines {
		n := h.node(nodeRefName(m))
		if n == nil {
			t.Fatalf("Machine %s: its Node %q does not exist", m.GetName(), nodeRefName(m))
		}
		if gap := n.CreationTimestamp.Sub(m.GetCreationTimestamp().Time); gap < time.Second {
			t.Errorf("Node %s was created %s after its Machine; Nodes must not join before JoinDelay 1s", n.Name, gap)
		}
	}
	name := regexp.MustCompile(`^alpha-[a-z0-9]{5}$`)
	for _, m := range machines {
		if !name.MatchString(m.GetName()) {
			t.Errorf("Machine name %q, want alpha-<random5>", m.GetName())
		}
		if m.GetLabels()[PoolLabel] != "alpha" || !slices.Contains(m.GetFinalizers(), Finalizer) {
			t.Errorf("Machine %s: labels %v finalizers %v", m.GetName(), m.GetLabels(), m.GetFinalizers())
		}
		if kubelet, _, _ := unstructured.NestedString(m.Object, "spec", "versions", "kubelet"); kubelet != "v1.35.5" {
			t.Errorf("Machine %s kubelet %q, want the default v1.35.5", m.GetName(), kubelet)
		}
		// The contract's owner-reference fallback: the MachineSet's name
		// minus its last segment is the pool.
		refs := m.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != "MachineSet" || poolOf(m) != "alpha" {
			t.Fatalf("Machine %s owners %+v", m.GetName(), refs)
		}
		set, err := h.dyn.Resource(MachineSetsGVR).Namespace(h.ns).Get(t.Context(), refs[0].Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if owners := set.GetOwnerReferences(); len(owners) != 1 || owners[0].UID != md.GetUID() || replicasOf(set) != 3 {
			t.Errorf("MachineSet %s: owners %+v replicas %d", set.GetName(), owners, replicasOf(set))
		}
		if ref := nodeRefName(m); ref != m.GetName() {
			t.Errorf("Machine %s nodeRef %q, want its own name", m.GetName(), ref)
		}
		checkNode(t, h.node(m.GetName()), "alpha")
	}
	h.eventually("MachineDeployment status 3/3/3", 5*time.Second, func() (bool, error) {
		return h.statusCount("alpha", "replicas") == 3 && h.statusCount("alpha", "readyReplicas") == 3 &&
			h.statusCount("alpha", "updatedReplicas") == 3, nil
	})
}

func checkNode(t *testing.T, node *corev1.Node, pool string) {
	t.Helper()
	if node == nil {
		t.Fatal("Node missing")
	}
	labels := node.Labels
	if labels[InstanceTypeLabel] != "cpx41" || labels[PoolLabel] != pool || labels["example.com/tier"] != "web" {
		t.Errorf("Node %s labels %v", node.Name, labels)
	}
	ready := readyCondition(node)
	if ready == nil || ready.Status != corev1.ConditionTrue || ready.LastTransitionTime.IsZero() {
		t.Errorf("Node %s Ready condition %+v", node.Name, ready)
	}
	if node.Status.NodeInfo.KubeletVersion != "v1.35.5" {
		t.Errorf("Node %s kubeletVersion %q", node.Name, node.Status.NodeInfo.KubeletVersion)
	}
	cpu, memory := node.Status.Capacity[corev1.ResourceCPU], node.Status.Capacity[corev1.ResourceMemory]
	if cpu.Cmp(resource.MustParse("8")) != 0 || memory.Cmp(resource.MustParse("16Gi")) != 0 {
		t.Errorf("Node %s capacity cpu %s memory %s, want a cpx41's 8 and 16Gi", node.Name, &cpu, &memory)
	}
}

func TestSim_ScaleDownDeletesNewestMachinesAndNodes(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("beta", 1, PoolOptions{Kubelet: "v1.36.1"})
	h.converge("beta")
	var oldest string
	for name := range h.machines("beta") {
		oldest = name
	}
	h.scale("beta", 3)
	h.converge("beta")
	before := h.machines("beta")

	h.scale("beta", 1)
	h.converge("beta")
	after := h.machines("beta")
	if len(after) != 1 || after[oldest] == nil {
		t.Fatalf("after 3→1 Machines %v, want only the oldest %s", keys(after), oldest)
	}
	for name := range before {
		if name == oldest {
			continue
		}
		if ok, err := h.machineGone(name)(); !ok || err != nil {
			t.Errorf("Machine %s or its Node still there (%v)", name, err)
		}
	}
	if node := h.node(oldest); node == nil || node.Status.NodeInfo.KubeletVersion != "v1.36.1" {
		t.Errorf("surviving Node %+v, want kubelet v1.36.1 from the template", node)
	}
	h.eventually("MachineDeployment status 1/1", 5*time.Second, func() (bool, error) {
		return h.statusCount("beta", "replicas") == 1 && h.statusCount("beta", "readyReplicas") == 1, nil
	})
}

func TestSim_FailCreatesSetsErrorReasonAndNoNode(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.sim.FailCreates("gamma", "InsufficientResources", "no cpx31 left in fsn1")
	h.createPool("gamma", 2, PoolOptions{})
	h.eventually("two failed Machines", 10*time.Second, func() (bool, error) {
		failed := 0
		for _, m := range h.machines("gamma") {
			reason, _, _ := unstructured.NestedString(m.Object, "status", "errorReason")
			message, _, _ := unstructured.NestedString(m.Object, "status", "errorMessage")
			if reason == "InsufficientResources" && message == "no cpx31 left in fsn1" {
				failed++
			}
		}
		return failed == 2, nil
	})
	time.Sleep(100*time.Millisecond + 3*resync) // past JoinDelay, several passes
	for name, m := range h.machines("gamma") {
		if ref := nodeRefName(m); ref != "" || h.node(name) != nil {
			t.Errorf("failed Machine %s joined a Node (nodeRef %q)", name, ref)
		}
	}
	if ok, err := h.sim.Converged(t.Context(), "gamma"); ok || err != nil {
		t.Errorf("Converged = %t, %v with only failed Machines", ok, err)
	}

	// Cleared, new Machines join again; the failed ones stay failed.
	h.sim.FailCreates("gamma", "", "")
	h.scale("gamma", 3)
	h.eventually("the third Machine joins", 10*time.Second, func() (bool, error) {
		joined := 0
		for _, m := range h.machines("gamma") {
			if nodeRefName(m) != "" {
				joined++
			}
		}
		return joined == 1 && h.statusCount("gamma", "readyReplicas") == 1 && h.statusCount("gamma", "replicas") == 3, nil
	})
}

func TestSim_StallDeletesKeepsMachineUntilReleased(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("delta", 1, PoolOptions{})
	h.converge("delta")
	var victim string
	for name := range h.machines("delta") {
		victim = name
	}

	h.sim.StallDeletes("delta", true)
	if err := h.dyn.Resource(MachinesGVR).Namespace(h.ns).Delete(t.Context(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("a replacement joins", 10*time.Second, func() (bool, error) {
		for name, m := range h.machines("delta") {
			if name != victim && nodeRefName(m) != "" {
				return true, nil
			}
		}
		return false, nil
	})
	time.Sleep(3 * resync)
	m := h.machines("delta")[victim]
	if m == nil || m.GetDeletionTimestamp() == nil || h.node(victim) == nil {
		t.Fatalf("stalled Machine %s: %v, Node present %t; want it deleting with its Node", victim, m, h.node(victim) != nil)
	}
	if ok, _ := h.sim.Converged(t.Context(), "delta"); ok {
		t.Error("Converged while a stalled deletion is pending")
	}

	h.sim.StallDeletes("delta", false)
	h.eventually("released Machine and its Node gone", 10*time.Second, h.machineGone(victim))
	h.converge("delta")
}

func TestSim_SetNodeReadyFalseTurnsNodeNotReady(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("epsilon", 1, PoolOptions{})
	h.converge("epsilon")
	var name string
	for n := range h.machines("epsilon") {
		name = n
	}
	since := readyCondition(h.node(name)).LastTransitionTime

	if err := h.sim.SetNodeReady(t.Context(), name, false); err != nil {
		t.Fatal(err)
	}
	h.eventually("readyReplicas 0", 5*time.Second, func() (bool, error) {
		return h.statusCount("epsilon", "readyReplicas") == 0, nil
	})
	time.Sleep(3 * resync) // the simulator must not heal it by itself
	ready := readyCondition(h.node(name))
	if ready.Status != corev1.ConditionFalse || ready.LastTransitionTime.Before(&since) {
		t.Errorf("Ready condition %+v, want False with a transition at or after %s", ready, since)
	}
	if ok, err := h.sim.Converged(t.Context(), "epsilon"); ok || err != nil {
		t.Errorf("Converged = %t, %v with a NotReady Node", ok, err)
	}

	if err := h.sim.SetNodeReady(t.Context(), name, true); err != nil {
		t.Fatal(err)
	}
	h.converge("epsilon")
}

func TestSim_RunReturnsOnCancelWithoutWaitingOutJoinDelay(t *testing.T) {
	h := prepare(t, Options{JoinDelay: time.Hour})
	h.createPool("zeta", 5, PoolOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.sim.Run(ctx) }()
	h.eventually("Machines being created", 10*time.Second, func() (bool, error) {
		return len(h.machines("zeta")) > 0, nil
	})
	cancel()
	// Any return at all shows Run did not wait out the Machines' one-hour
	// JoinDelay; the limit only keeps a broken Run from hanging the test.
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v on cancel, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within a minute of cancel")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
