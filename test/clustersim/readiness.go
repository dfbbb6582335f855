package clustersim

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditions are the four a kubelet posts: Ready as given (or, once the
// kubelet went quiet, Unknown as kube-controller-manager writes it), and
// the pressure conditions False, or Unknown beside an Unknown Ready.
func conditions(ready corev1.ConditionStatus, transition, heartbeat metav1.Time) []corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: heartbeat, LastTransitionTime: transition,
		Reason: "KubeletReady", Message: "kubelet is posting ready status",
	}
	pressure := corev1.ConditionFalse
	switch ready {
	case corev1.ConditionFalse:
		c.Reason, c.Message = "KubeletNotReady", "container runtime network not ready (clustersim)"
	case corev1.ConditionUnknown:
		c.Reason, c.Message = "NodeStatusUnknown", "Kubelet stopped posting node status."
		pressure = corev1.ConditionUnknown
	}
	out := []corev1.NodeCondition{c}
	for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		p := corev1.NodeCondition{Type: t, Status: pressure, LastHeartbeatTime: heartbeat, LastTransitionTime: transition,
			Reason: "KubeletHasSufficient" + string(t), Message: "kubelet has sufficient resources"}
		if pressure == corev1.ConditionUnknown {
			p.Reason, p.Message = "NodeStatusUnknown", "Kubelet stopped posting node status."
		}
		out = append(out, p)
	}
	return out
}

func kubeletCondition(t corev1.NodeConditionType) bool {
	switch t {
	case corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
		return true
	}
	return false
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
