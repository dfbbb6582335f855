package e2e

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubehz.dev/agent/test/kube"
)

// TestObserverPod_AdmittedUnderRestrictedPodSecurity asks the apiserver's own
// PodSecurity admission, not a field-by-field check, whether the observer's
// pod meets the "restricted" profile: a dry-run create in a namespace that
// enforces it.
func TestObserverPod_AdmittedUnderRestrictedPodSecurity(t *testing.T) {
	objs, err := kube.Render(filepath.Join(suite.env.Root, "deploy", "observer"))
	if err != nil {
		t.Fatal(err)
	}
	var deploy appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &deploy); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ns = "e2e-pss-restricted"
	if _, err := suite.env.Client.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   ns,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"},
	}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err) // it stays from an earlier run of the test (-count=2): no namespace controller here
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "observer-pss", Namespace: ns}, Spec: deploy.Spec.Template.Spec}
	pod.Spec.ServiceAccountName = "" // the ServiceAccount lives in kubehz-system
	if _, err := suite.env.Client.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("restricted PodSecurity rejects the observer pod: %v", err)
	}

	// The same check must be able to fail: a privileged variant is refused.
	bad := pod.DeepCopy()
	bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	if _, err := suite.env.Client.CoreV1().Pods(ns).Create(ctxT(t), bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatal("a pod allowing privilege escalation was admitted; the namespace does not enforce restricted")
	}
}
