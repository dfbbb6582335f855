package actions

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"strings"
	"sync"
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
	logs     *syncBuffer
	stop     func() // cancels Run and waits for it; afterwards no handler runs
}

func start(t *testing.T, objs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{t: t, client: fake.NewClientset(objs...), clk: clocktesting.NewFakeClock(t0), logs: &syncBuffer{}}
	h.w = New(Source{ConfigMaps: kubeapitest.Reader[*kubeapi.ConfigMap, *kubeapi.ConfigMapList](h.client.CoreV1().ConfigMaps(ns)),
		Leases: kubeapitest.Reader[*kubeapi.Lease, *kubeapi.LeaseList](h.client.CoordinationV1().Leases(ns))}, ns, Names{ConfigMap: report.ConfigMapName, Lease: report.LeaseName}, h.clk, slog.New(slog.NewJSONHandler(h.logs, nil)), func() { h.notified.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		if err := h.w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
		close(done)
	}()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(patience):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(h.stop)
	await(t, "caches to sync", h.w.HasSynced)
	return h
}

func (h *harness) awaitActions(want []wire.Action) {
	h.t.Helper()
	await(h.t, "the folded actions", func() bool { return reflect.DeepEqual(h.w.Actions(h.clk.Now()), want) })
}

func (h *harness) awaitNotified(n int32) {
	h.t.Helper()
	await(h.t, "a notification", func() bool { return h.notified.Load() >= n })
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

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// count is how many log lines contain all of parts.
func (s *syncBuffer) count(parts ...string) int {
	n := 0
	for line := range strings.Lines(s.String()) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
