package actions

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

const ns = "kubehz-system"

// patience bounds real time spent waiting on informers; a deadline for a
// hung test, never a delay a passing test sits through.
const patience = 10 * time.Second

// harness runs one Watcher over a fake clientset and a fake clock, counting
// notifications and keeping the log.
type harness struct {
	t        *testing.T
	client   *fake.Clientset
	clk      *clocktesting.FakeClock
	w        *Watcher
	notified atomic.Int32
	logs     *testkit.Logs
	run      *testkit.Running // Stop waits for Run; afterwards no handler runs
}

func start(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{t: t, client: fake.NewClientset(objs...), clk: clocktesting.NewFakeClock(t0), logs: &testkit.Logs{}}
	h.w = New(Source{ConfigMaps: kubeapitest.Reader[*kubeapi.ConfigMap, *kubeapi.ConfigMapList](h.client.CoreV1().ConfigMaps(ns)),
		Leases: kubeapitest.Reader[*kubeapi.Lease, *kubeapi.LeaseList](h.client.CoordinationV1().Leases(ns))}, ns, Names{ConfigMap: report.ConfigMapName, Lease: report.LeaseName}, h.clk, Options{Log: h.logs.Logger(), Notify: func() { h.notified.Add(1) }})
	h.run = testkit.Start(t, patience, h.w.Run)
	testkit.Await(t, patience, "caches to sync", h.w.HasSynced)
	// The fake tracker replays to a watch opened after a List only the
	// objects it still holds, so a delete between an informer's List and its
	// Watch would be lost for good; HasSynced does not wait for the Watch.
	testkit.Await(t, patience, "both watches", func() bool { return watches(h.client) >= 2 })
	return h
}

// watches counts the watches client has opened. The fake records a watch
// under the lock in which it registers it, so a counted watch sees every
// later write.
func watches(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "watch" {
			n++
		}
	}
	return n
}

func (h *harness) awaitActions(want []wire.Action) {
	h.t.Helper()
	testkit.Await(h.t, patience, "the folded actions", func() bool { return reflect.DeepEqual(h.w.Actions(h.clk.Now()), want) })
}

func (h *harness) awaitNotified(n int32) {
	h.t.Helper()
	testkit.Await(h.t, patience, "a notification", func() bool { return h.notified.Load() >= n })
}

// expiry is the Watcher's armed expiry, read the way the timer loop does.
func (h *harness) expiry() time.Time {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	return h.w.expiry
}

func (h *harness) updateLease(l *coordinationv1.Lease) {
	h.t.Helper()
	if _, err := h.client.CoordinationV1().Leases(ns).Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) updateReport(cm *corev1.ConfigMap) {
	h.t.Helper()
	if _, err := h.client.CoreV1().ConfigMaps(cm.Namespace).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func leaseObj(holder string, renew time.Time, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: report.LeaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: renew}, LeaseDurationSeconds: &seconds,
		},
	}
}

func rawCM(namespace, name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string]string{report.Key: data},
	}
}

func reportCM(t *testing.T, doc report.Document) *corev1.ConfigMap {
	t.Helper()
	s, err := report.Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	return rawCM(ns, report.ConfigMapName, s)
}
