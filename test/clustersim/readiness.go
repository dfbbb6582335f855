package clustersim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// readyState is the Ready condition a kubelet (True, False) or, once the
// kubelet went quiet, the node lifecycle controller (Unknown) writes.
func readyState(status corev1.ConditionStatus, transition, heartbeat metav1.Time) corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: status, LastHeartbeatTime: heartbeat, LastTransitionTime: transition,
		Reason: "KubeletReady", Message: "kubelet is posting ready status",
	}
	switch status {
	case corev1.ConditionFalse:
		c.Reason, c.Message = "KubeletNotReady", "container runtime network not ready (clustersim)"
	case corev1.ConditionUnknown:
		c.Reason, c.Message = "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	return c
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func isReady(node *corev1.Node) bool {
	c := readyCondition(node)
	return c != nil && c.Status == corev1.ConditionTrue
}

func (s *Sim) nodeReady(ctx context.Context, name string) (bool, error) {
	node, err := s.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get Node %s: %w", name, err)
	}
	return isReady(node), nil
}

// SetNodeReady turns the Node's Ready condition True or False, moving its
// lastTransitionTime only when the status changes, as a kubelet would. The
// simulator never flips it back by itself.
func (s *Sim) SetNodeReady(ctx context.Context, name string, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return s.writeReady(ctx, name, status, time.Time{})
}

// SetNodeCondition sets the Node's Ready condition to status (True, False
// or Unknown) with lastTransitionTime since, so a test can have a Node
// NotReady for five minutes without waiting them out. An Unknown Node's
// last heartbeat is since too: that is when its kubelet went quiet. The
// simulator never changes the condition back by itself.
func (s *Sim) SetNodeCondition(ctx context.Context, name string, status corev1.ConditionStatus, since time.Time) error {
	switch status {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
	default:
		return fmt.Errorf("set Node %s Ready=%q: want True, False or Unknown", name, status)
	}
	if since.IsZero() {
		return fmt.Errorf("set Node %s Ready=%s: no transition time", name, status)
	}
	return s.writeReady(ctx, name, status, since)
}

// writeReady writes the Ready condition. A zero since keeps the condition's
// lastTransitionTime when the status is unchanged and takes now otherwise.
func (s *Sim) writeReady(ctx context.Context, name string, status corev1.ConditionStatus, since time.Time) error {
	nodes := s.kube.CoreV1().Nodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		transition, heartbeat := now, now
		if !since.IsZero() {
			transition = metav1.NewTime(since)
			if status == corev1.ConditionUnknown {
				heartbeat = transition
			}
		}
		want := readyState(status, transition, heartbeat)
		if c := readyCondition(node); c == nil {
			node.Status.Conditions = append(node.Status.Conditions, want)
		} else {
			if since.IsZero() && c.Status == want.Status {
				want.LastTransitionTime = c.LastTransitionTime
			}
			*c = want
		}
		_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set Node %s Ready=%s: %w", name, status, err)
	}
	attrs := []any{"node", name, "ready", string(status)}
	if !since.IsZero() {
		attrs = append(attrs, "since", since)
	}
	s.log.Info("Set Node readiness", attrs...)
	return nil
}
