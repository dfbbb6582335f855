package cluster

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

// patience bounds real time spent waiting on the informers; it is a deadline
// for a hung test, never a delay a passing test sits through.
const patience = 10 * time.Second

func TestCache_HoldsCompactRecordsAndSignalsEveryChangeOfThem(t *testing.T) {
	normal := warning("shop", "web-0.aaa")
	normal.Type = corev1.EventTypeNormal
	normal.Reason = "Pulled"
	client := fake.NewClientset(
		readyNode("wrk-b", corev1.ConditionTrue),
		readyNode("ctl-a", corev1.ConditionTrue),
		pod("shop", "web-0", corev1.PodRunning),
		pod("kube-system", "dns-0", corev1.PodPending),
		warning("shop", "web-0.17f"),
		normal,
	)
	core := client.CoreV1()
	c := New(Source{
		Nodes:  kubeapitest.Reader[*kubeapi.Node, *kubeapi.NodeList](core.Nodes()),
		Pods:   kubeapitest.Reader[*kubeapi.PodPhase, *kubeapi.PodPhaseList](core.Pods("")),
		Events: kubeapitest.Reader[*kubeapi.Event, *kubeapi.EventList](core.Events("")),
	}, Options{Events: EventOptions{KeepMessage: true, MDNamespace: "kube-system"}, Now: time.Now})

	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() {
		c.Run(ctx)
		close(stopped)
	}()
	defer func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(patience):
			t.Error("Run did not return after cancel")
		}
	}()

	syncCtx, syncCancel := context.WithTimeout(ctx, patience)
	defer syncCancel()
	if !c.WaitForSync(syncCtx) {
		t.Fatal("caches did not sync")
	}

	wantNodes := []*Node{
		{Name: "ctl-a", Status: "Ready", Ready: true, Roles: "worker"},
		{Name: "wrk-b", Status: "Ready", Ready: true, Roles: "worker"},
	}
	awaitEqual(t, "nodes", c.Nodes, wantNodes)
	awaitPods(t, "pods", c, wire.Pods{Total: 2, Running: 1, Pending: 1,
		ByNamespace: map[string]int{"kube-system": 1, "shop": 1}})
	// The fake clientset ignores the Warning field selector, so the Normal
	// event is cached too; its flag keeps it off the beat.
	awaitEqual(t, "events", c.Events, []*Event{
		{Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
			Message: "volume secret-x not found", Warning: true, Count: 2, LastSeen: t0},
		{Namespace: "shop", Name: "web-0.aaa", Reason: "Pulled", Kind: "Pod",
			Message: "volume secret-x not found", Count: 2, LastSeen: t0},
	})
	settle(t, c)

	nodes := client.CoreV1().Nodes()
	if _, err := nodes.Update(ctx, readyNode("wrk-b", corev1.ConditionFalse), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantNodes[1] = &Node{Name: "wrk-b", Status: "NotReady", Roles: "worker"}
	awaitEqual(t, "nodes after update", c.Nodes, wantNodes)
	awaitSignal(t, c, "node update")
	// A status post that changes nothing the record holds does not signal.
	unchanged := readyNode("wrk-b", corev1.ConditionFalse)
	unchanged.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}}}
	unchanged.ResourceVersion = "7001" // the fake clientset keeps what it is given
	updated, err := nodes.Update(ctx, unchanged, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	awaitDelivered(t, c.controllers[0], updated.ResourceVersion)
	assertNoSignal(t, c, "a node update that changed nothing the record holds signalled a change")

	if _, err := client.CoreV1().Pods("shop").Create(ctx, pod("shop", "web-1", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitPods(t, "pods after add", c, wire.Pods{Total: 3, Running: 1, Pending: 1, Unknown: 1,
		ByNamespace: map[string]int{"kube-system": 1, "shop": 2}})
	awaitSignal(t, c, "pod add")
	if got := c.Pods(false); got.ByNamespace != nil {
		t.Errorf("namespaces counted although not asked: %v", got.ByNamespace)
	}

	// A phase change signals; the same phase again does not.
	running := pod("shop", "web-1", corev1.PodRunning)
	if _, err := client.CoreV1().Pods("shop").UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitPods(t, "pods after a phase change", c, wire.Pods{Total: 3, Running: 2, Pending: 1,
		ByNamespace: map[string]int{"kube-system": 1, "shop": 2}})
	awaitSignal(t, c, "pod phase change")
	running.Labels = map[string]string{"app": "web"}
	if _, err := client.CoreV1().Pods("shop").Update(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	assertNoSignal(t, c, "a pod update that kept its phase signalled a change")
	if err := client.CoreV1().Pods("kube-system").Delete(ctx, "dns-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitPods(t, "pods after delete", c, wire.Pods{Total: 2, Running: 2, ByNamespace: map[string]int{"shop": 2}})
	awaitSignal(t, c, "pod delete")

	// An event seen again is a change; the same event written again is not.
	again := warning("shop", "web-0.17f")
	again.Count = 3
	if _, err := client.CoreV1().Events("shop").Update(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitSignal(t, c, "event count update")
	again.Labels = map[string]string{"noise": "yes"}
	again.ResourceVersion = "7002"
	noisy, err := client.CoreV1().Events("shop").Update(ctx, again, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	awaitDelivered(t, c.reflectors[1], noisy.ResourceVersion)
	assertNoSignal(t, c, "an event update that changed nothing the record holds signalled a change")

	if err := client.CoreV1().Events("shop").Delete(ctx, "web-0.aaa", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitEqual(t, "events after delete", c.Events, []*Event{
		{Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
			Message: "volume secret-x not found", Warning: true, Count: 3, LastSeen: t0},
	})
	awaitSignal(t, c, "event delete")

	if err := nodes.Delete(ctx, "ctl-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitEqual(t, "nodes after delete", c.Nodes, wantNodes[1:])
	awaitSignal(t, c, "node delete")
}

func readyNode(name string, ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, ManagedFields: managed},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
		},
	}
}

func pod(ns, name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ManagedFields: managed},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// podPhase is pod as the observer's pod client decodes it.
func podPhase(ns, name string, phase corev1.PodPhase) *kubeapi.PodPhase {
	return kubeapitest.MustConvert[*kubeapi.PodPhase](pod(ns, name, phase))
}

type keyed interface{ *Node | *Event }

// awaitPods polls the pod counts until they equal want.
func awaitPods(t *testing.T, what string, c *Cache, want wire.Pods) {
	t.Helper()
	var got wire.Pods
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = c.Pods(true); reflect.DeepEqual(got, want) {
			return
		}
	}
	t.Fatalf("%s: %+v, want %+v", what, got, want)
}

// awaitEqual polls list until, sorted by key, it equals want. Stores list in
// no particular order.
func awaitEqual[T keyed](t *testing.T, what string, list func() []T, want []T) {
	t.Helper()
	var got []T
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got = list()
		slices.SortFunc(got, func(a, b T) int { return cmp.Compare(keyOf(a), keyOf(b)) })
		if reflect.DeepEqual(got, want) {
			return
		}
	}
	t.Fatalf("%s:\n%s\nwant\n%s", what, dump(got), dump(want))
}

func keyOf[T keyed](v T) string {
	m := any(v).(interface{ GetObjectMeta() metav1.Object }).GetObjectMeta()
	return m.GetNamespace() + "/" + m.GetName()
}

func dump[T keyed](items []T) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "  %+v\n", it)
	}
	return b.String()
}

// awaitSignal requires a change signal within patience.
func awaitSignal(t *testing.T, c *Cache, after string) {
	t.Helper()
	select {
	case <-c.Changed():
	case <-time.After(patience):
		t.Fatalf("no change signal after %s", after)
	}
}

// settle drains the signals of the initial list. The informers mark
// themselves synced just before handling the last listed object, so one
// late signal may follow the stores filling; a quiet 200 ms ends it.
func settle(t *testing.T, c *Cache) {
	t.Helper()
	for {
		select {
		case <-c.Changed():
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

// awaitDelivered waits until the informer has seen resourceVersion rv: an
// update that must not signal has then reached its handler, or is about to,
// and the wait that follows is only for that handler to run.
func awaitDelivered(t *testing.T, ctrl interface{ LastSyncResourceVersion() string }, rv string) {
	t.Helper()
	if rv == "" {
		t.Fatal("the update came back without a resourceVersion; the check would prove nothing")
	}
	testkit.Await(t, patience, "the informer to see resourceVersion "+rv, func() bool { return ctrl.LastSyncResourceVersion() == rv })
}

// assertNoSignal fails t if c signals a change within 200 ms: what happened
// last must not count as one.
func assertNoSignal(t *testing.T, c *Cache, what string) {
	t.Helper()
	select {
	case <-c.Changed():
		t.Error(what)
	case <-time.After(200 * time.Millisecond):
	}
}
