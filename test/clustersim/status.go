package clustersim

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// writeStatus keeps the replica counts of the MachineDeployment and its
// MachineSet current, writing only when a count changed.
func (s *Sim) writeStatus(ctx context.Context, w *world, md, set *unstructured.Unstructured, active []*unstructured.Unstructured) error {
	want := s.templateKubelet(md)
	var ready, updated int64
	for _, m := range active {
		if node, ok := w.nodes[nodeRefName(m)]; ok && isReady(node) {
			ready++
		}
		if sameVersion(machineKubelet(m), want) {
			updated++
		}
	}
	counts := map[string]int64{
		"replicas":          int64(len(active)),
		"readyReplicas":     ready,
		"availableReplicas": ready,
	}
	setErr := s.writeCounts(ctx, s.dyn.Resource(MachineSetsGVR).Namespace(set.GetNamespace()), set, counts)
	counts["updatedReplicas"] = updated
	counts["unavailableReplicas"] = max(int64(replicasOf(md))-ready, 0)
	return errors.Join(setErr, s.writeCounts(ctx, s.dyn.Resource(MachineDeploymentsGVR).Namespace(md.GetNamespace()), md, counts))
}

// writeCounts updates status with counts and observedGeneration when any
// differs, keeping every other status field. A conflict waits for the
// next pass, which reads afresh.
func (s *Sim) writeCounts(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, counts map[string]int64) error {
	counts["observedGeneration"] = obj.GetGeneration()
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	if status == nil {
		status = map[string]any{}
	}
	changed := false
	for field, n := range counts {
		if have, ok := status[field].(int64); !ok || have != n {
			status[field] = n
			changed = true
		}
	}
	if !changed {
		return nil
	}
	obj = obj.DeepCopy()
	obj.Object["status"] = status
	if _, err := ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); quiet(err) != nil {
		return fmt.Errorf("update status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// sameVersion compares kubelet versions ignoring a leading "v".
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(strings.TrimSpace(a), "v") == strings.TrimPrefix(strings.TrimSpace(b), "v")
}

// templateKubelet is the kubelet version new Machines of md get.
func (s *Sim) templateKubelet(md *unstructured.Unstructured) string {
	kubelet, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "versions", "kubelet")
	if kubelet == "" {
		return s.opts.Kubelet
	}
	return kubelet
}

func machineKubelet(m *unstructured.Unstructured) string {
	kubelet, _, _ := unstructured.NestedString(m.Object, "spec", "versions", "kubelet")
	return kubelet
}
