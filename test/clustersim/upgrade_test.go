package clustersim

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSim_KubeletChangeRollsOneMachineAtATime(t *testing.T) {
	h := start(t, Options{JoinDelay: 300 * time.Millisecond})
	h.createPool("eta", 2, PoolOptions{Kubelet: "v1.35.5"})
	h.converge("eta")
	before := h.machineInfos("eta")
	var oldest []string // the order the roll must replace them in
	for _, m := range before {
		oldest = append(oldest, m.Name)
	}

	// The actor writes the version without the "v"; the simulator compares
	// versions ignoring it.
	patch := []byte(`{"spec":{"template":{"spec":{"versions":{"kubelet":"1.36.0"}}}}}`)
	if _, err := h.dyn.Resource(MachineDeploymentsGVR).Namespace(h.ns).Patch(t.Context(), "eta", types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubehz-agent"}); err != nil {
		t.Fatal(err)
	}
	var gone []string // old Machines in the order they started deleting or vanished
	maxActive, samples := 0, 0
	h.eventually("pool eta rolled to 1.36.0", 20*time.Second, func() (bool, error) {
		ms, err := h.sim.Machines(t.Context(), "eta")
		if err != nil {
			return false, err
		}
		samples++
		active, readyNew := 0, 0
		present := map[string]bool{}
		for _, m := range ms {
			if m.Deleting {
				continue
			}
			active++
			present[m.Name] = true
			if sameVersion(m.Kubelet, "1.36.0") && m.Ready {
				readyNew++
			}
		}
		maxActive = max(maxActive, active)
		if active < 2 {
			t.Errorf("sample %d: %d non-deleting Machines, want at least spec.replicas 2 (maxUnavailable 0)", samples, active)
		}
		for _, name := range oldest {
			if !present[name] && !slices.Contains(gone, name) {
				gone = append(gone, name)
			}
		}
		// Each old Machine goes only once a new one has joined Ready.
		if len(gone) > readyNew {
			t.Errorf("sample %d: %d old Machines gone with only %d new ones Ready: %+v", samples, len(gone), readyNew, ms)
		}
		return h.sim.Converged(t.Context(), "eta")
	})
	t.Logf("%d samples during the roll", samples)
	if maxActive > 3 {
		t.Errorf("saw %d non-deleting Machines, want at most spec.replicas+1 = 3", maxActive)
	}
	if !slices.Equal(gone, oldest) {
		t.Errorf("old Machines replaced in order %v, want oldest first %v", gone, oldest)
	}
	after := h.machineInfos("eta")
	if len(after) != 2 {
		t.Fatalf("%d Machines after the roll, want 2: %+v", len(after), after)
	}
	for _, m := range after {
		if slices.Contains(oldest, m.Name) {
			t.Errorf("old Machine %s survived the roll", m.Name)
		}
		node := h.node(m.Node)
		if m.Kubelet != "1.36.0" || node == nil || !isReady(node) || node.Status.NodeInfo.KubeletVersion != "v1.36.0" {
			t.Errorf("Machine %+v with Node %v, want kubelet 1.36.0 on a Ready Node reporting v1.36.0", m, node)
		}
	}
	h.eventually("MachineDeployment status updated 2/2", 5*time.Second, func() (bool, error) {
		return h.statusCount("eta", "updatedReplicas") == 2 && h.statusCount("eta", "readyReplicas") == 2, nil
	})
}

func TestSim_ScaleDownMidRollKeepsTheSurge(t *testing.T) {
	h := start(t, Options{JoinDelay: 300 * time.Millisecond})
	h.createPool("theta", 2, PoolOptions{Kubelet: "v1.35.5"})
	h.converge("theta")
	h.sim.HoldJoins("theta", true) // the surge stays joining until released
	patch := []byte(`{"spec":{"template":{"spec":{"versions":{"kubelet":"v1.36.0"}}}}}`)
	if _, err := h.dyn.Resource(MachineDeploymentsGVR).Namespace(h.ns).Patch(t.Context(), "theta", types.MergePatchType, patch,
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var surge string
	h.eventually("a surge Machine", 10*time.Second, func() (bool, error) {
		for _, m := range h.machineInfos("theta") {
			if m.Kubelet == "v1.36.0" {
				surge = m.Name
			}
		}
		return surge != "", nil
	})

	h.scale("theta", 1)
	h.eventually("one old Machine scaled away", 10*time.Second, func() (bool, error) {
		return len(h.machineInfos("theta")) == 2, nil
	})
	h.sim.HoldJoins("theta", false)
	h.converge("theta")
	if after := h.machineInfos("theta"); len(after) != 1 || after[0].Name != surge {
		t.Errorf("Machines %+v, want only the surge %s", after, surge)
	}
}

// machineInfos is Machines, failing the test on error.
func (h *harness) machineInfos(pool string) []MachineInfo {
	h.t.Helper()
	ms, err := h.sim.Machines(h.t.Context(), pool)
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}
