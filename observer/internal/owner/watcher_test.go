package owner

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
)

// The watcher follows the marker both ways, and Run leaves nothing behind
// once its context ends.
func TestWatcher_FollowsTheMarkerAndStopsCleanly(t *testing.T) {
	marker := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: ConfigMapName},
		Data:       map[string]string{Key: CronJob},
	}
	client := fake.NewClientset(marker)
	notified := make(chan struct{}, 8)
	w := New(kubeapitest.Reader[*kubeapi.ConfigMap, *kubeapi.ConfigMapList](client.CoreV1().ConfigMaps("kubehz-system")), Options{Notify: func() { notified <- struct{}{} }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	await := func(what string, want bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for w.Beating() != want {
			select {
			case <-notified:
			case <-deadline:
				t.Fatalf("timed out waiting: %s", what)
			}
		}
	}
	await("stand down for the CronJob", false)
	marker = marker.DeepCopy()
	marker.Data[Key] = Operator
	if _, err := client.CoreV1().ConfigMaps("kubehz-system").Update(ctx, marker, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	await("beat again for the operator", true)

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}
