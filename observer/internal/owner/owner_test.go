package owner

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/testkit"
)

func TestDecide_OnlyAnExplicitCronJobClaimStandsTheObserverDown(t *testing.T) {
	cases := []struct {
		name        string
		value       string
		present     bool
		beat, known bool
	}{
		{"no ConfigMap or key", "", false, true, true},
		{"empty value", "", true, true, true},
		{"operator", "operator", true, true, true},
		{"cronjob", "cronjob", true, false, true},
		{"cronjob, any case and spaces", "  CronJob\n", true, false, true},
		{"unknown value is no claim", "cron-job", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			beat, known := Decide(tc.value, tc.present)
			if beat != tc.beat || known != tc.known {
				t.Fatalf("Decide(%q, %v) = %v, %v; want %v, %v", tc.value, tc.present, beat, known, tc.beat, tc.known)
			}
		})
	}
}

// The watcher follows the marker both ways, and Run leaves nothing behind
// once its context ends.
func TestWatcher_FollowsTheMarkerAndStopsCleanly(t *testing.T) {
	marker := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: MarkerConfigMap},
		Data:       map[string]string{MarkerKey: CronJob},
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
	marker.Data[MarkerKey] = Operator
	if _, err := client.CoreV1().ConfigMaps("kubehz-system").Update(ctx, marker, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	await("beat again for the operator", true)

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

// An edit to another key of kubehz-agent-config re-evaluates the marker:
// an unknown value is logged once, again only when it changes, and cut.
func TestWatcher_LogsAnUnknownOwnerOnceUntilItChanges(t *testing.T) {
	logs := &testkit.Logs{}
	w := &Watcher{log: logs.Logger(), beat: true, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	set := func(value string) {
		t.Helper()
		if err := w.store.Update(&marker{namespace: "kubehz-system", name: MarkerConfigMap, value: value, has: true}); err != nil {
			t.Fatal(err)
		}
		w.reevaluate()
	}
	const unknown = "Unknown heartbeat owner"
	for range 3 {
		set("cron-job")
	}
	if n := logs.Count(unknown, `"value":"cron-job"`); n != 1 {
		t.Errorf("%d lines for one unknown value re-evaluated 3 times, want 1:\n%s", n, logs)
	}
	set(strings.Repeat("x", 100_000))
	set(strings.Repeat("x", 100_000))
	if n := logs.Count(unknown, `"value":"`+strings.Repeat("x", 63)+`"`); n != 1 {
		t.Errorf("%d lines quoting the second unknown value cut to 63 characters, want 1:\n%s", n, logs)
	}
	set(Operator)
	set("cron-job")
	if n := logs.Count(unknown); n != 3 {
		t.Errorf("%d unknown-owner lines, want 3: the first value logged again after a known one:\n%s", n, logs)
	}
	if !w.Beating() {
		t.Error("an unknown owner made the observer stand down")
	}
}
