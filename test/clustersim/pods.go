package clustersim

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// PauseImage is the one container image of the pods PlacePods creates.
const PauseImage = "registry.k8s.io/pause:3.10"

// boundPods selects every pod a scheduler has placed on some node; the
// simulator's kubelets and drains care about no other.
var boundPods = fields.OneTermNotEqualSelector("spec.nodeName", "").String()

// PlacePods creates n pods bound to node in namespace, as a scheduler would
// place them, creating the namespace if absent, and returns their names:
// sim-<node>-<index>, the lowest indices free. Nothing runs them; they
// matter for drains, which wait until every pod on the Node is gone.
func (s *Sim) PlacePods(ctx context.Context, node string, n int, namespace string) ([]string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	pods := s.kube.CoreV1().Pods(namespace)
	var placed []string
	// Each taken name costs one attempt, so the bound covers pods placed
	// earlier, or concurrently, on the same node.
	for i := 0; len(placed) < n; i++ {
		if i >= n+1000 {
			return placed, fmt.Errorf("place pods on Node %s: no free name among sim-%s-0..%d", node, node, i-1)
		}
		pod := simPod(namespace, "sim-"+node+"-"+strconv.Itoa(i), node)
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return placed, fmt.Errorf("create Pod %s/%s: %w", namespace, pod.Name, err)
		}
		placed = append(placed, pod.Name)
	}
	s.log.Info("Placed pods", "node", node, "namespace", namespace, "count", n)
	return placed, nil
}

func simPod(namespace, name, node string) *corev1.Pod {
	never := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "pause", Image: PauseImage}},
			// No token to mount: no controller here mints one.
			AutomountServiceAccountToken: &never,
		},
	}
}

// listBoundPods reads every bound pod, grouped by node. Tests place few,
// so one List a pass costs less than one per node.
func (s *Sim) listBoundPods(ctx context.Context) (map[string][]*corev1.Pod, error) {
	list, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: boundPods})
	if err != nil {
		return nil, fmt.Errorf("list bound Pods: %w", err)
	}
	out := map[string][]*corev1.Pod{}
	for i := range list.Items {
		pod := &list.Items[i]
		out[pod.Spec.NodeName] = append(out[pod.Spec.NodeName], pod)
	}
	return out, nil
}
