package clustersim

import (
	"context"
	"errors"
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

// PlacePods creates n pods bound to node in namespace, creating the
// namespace if absent, and returns their names: sim-<node>-<index>, the
// lowest indices free. Nothing runs them; they matter for drains, which
// wait until every pod bound to a deleting Machine's Node is gone.
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

// evict deletes, gracefully, every pod on node not yet deleting, as a drain
// does. The kubelet then confirms each, or, on a dead Node, never does.
func (s *Sim) evict(ctx context.Context, node string, pods []*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if err := quiet(s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})); err != nil {
			errs = append(errs, fmt.Errorf("evict Pod %s from Node %s: %w", objectKey(pod), node, err))
			continue
		}
		s.log.Info("Evicted Pod", "pod", objectKey(pod), "node", node)
	}
	return errors.Join(errs...)
}

// confirmDeletions plays the kubelets of the simulator's Ready Nodes: a
// pod deleting on one is stopped and removed with grace 0. The UID
// precondition keeps a pod recreated under the same name safe.
func (s *Sim) confirmDeletions(ctx context.Context, w *world) error {
	var errs []error
	for _, m := range w.machines {
		name := nodeRefName(m)
		if name == "" {
			name = m.GetName()
		}
		node, ok := w.nodes[name]
		if !ok || !isReady(node) {
			continue
		}
		for _, pod := range w.pods[name] {
			if pod.DeletionTimestamp == nil {
				continue
			}
			zero := int64(0)
			opts := metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}
			if err := quiet(s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)); err != nil {
				errs = append(errs, fmt.Errorf("confirm deletion of Pod %s on Node %s: %w", objectKey(pod), name, err))
				continue
			}
			s.log.Info("Confirmed Pod deletion", "pod", objectKey(pod), "node", name)
		}
	}
	return errors.Join(errs...)
}
