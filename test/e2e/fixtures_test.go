package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// nodeSpec describes a Node a test creates; the apiserver alone runs no
// kubelet, so the test writes the status a kubelet would.
type nodeSpec struct {
	name     string
	labels   map[string]string
	ready    corev1.ConditionStatus // "" = no Ready condition at all
	kubelet  string
	cpu, mem string
}

func createNode(t *testing.T, s nodeSpec) {
	t.Helper()
	ctx := ctxT(t)
	c := suite.env.Client.CoreV1().Nodes()
	if _, err := c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: s.labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), s.name, metav1.DeleteOptions{}) })
	// Read again on a conflict: where kube-controller-manager runs (the
	// acting tests), it labels and taints a new Node as soon as it appears.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.NodeInfo.KubeletVersion = s.kubelet
		if s.ready != "" {
			n.Status.Conditions = []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: s.ready, Reason: "Test",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}}
		}
		n.Status.Capacity = corev1.ResourceList{}
		if s.cpu != "" {
			n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse(s.cpu)
		}
		if s.mem != "" {
			n.Status.Capacity[corev1.ResourceMemory] = resource.MustParse(s.mem)
		}
		_, err = c.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setNodeReady(t *testing.T, name string, status corev1.ConditionStatus) {
	t.Helper()
	if err := updateNodeReady(ctxT(t), name, status); err != nil {
		t.Fatal(err)
	}
}

// setNodeReadyQuiet is setNodeReady for background goroutines, which must
// not call t.Fatal; a failed flip only means one change signal fewer.
func setNodeReadyQuiet(name string, status corev1.ConditionStatus) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = updateNodeReady(ctx, name, status)
}

// updateNodeReady reads the Node again on a conflict, as createNode does.
func updateNodeReady(ctx context.Context, name string, status corev1.ConditionStatus) error {
	c := suite.env.Client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: status, Reason: "Test",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}}
		_, err = c.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	c := suite.env.Client.CoreV1().Namespaces()
	// No namespace controller runs here, so a deleted namespace would stay
	// Terminating: namespaces are kept, and an earlier run's (-count=2) is
	// reused; their pods and events are deleted by the tests instead.
	if _, err := c.Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// createPod creates a pod and writes its phase, as a kubelet would.
func createPod(t *testing.T, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	ctx := ctxT(t)
	c := suite.env.Client.CoreV1().Pods(ns)
	p, err := c.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/none"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase != "" {
		p.Status.Phase = phase
		if _, err := c.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// createEvent records an event the way a component would.
func createEvent(t *testing.T, ns, name, typ, reason, kind, message string, count int32, last time.Time) {
	t.Helper()
	c := suite.env.Client.CoreV1().Events(ns)
	_, err := c.Create(ctxT(t), &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: "thing"},
		Type:           typ, Reason: reason, Message: message, Count: count,
		FirstTimestamp: metav1.NewTime(last), LastTimestamp: metav1.NewTime(last),
		Source: corev1.EventSource{Component: "e2e"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}
