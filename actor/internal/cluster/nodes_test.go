package cluster

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A Node keeps machine-controller's two marks naming its Machine: healing
// reads them to find the Node of a Machine whose status.nodeRef is not
// written yet. The keys are spelt out, not taken from the package.
func TestNodeFrom_KeepsTheMarksNamingItsMachine(t *testing.T) {
	since := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-a-m1",
			Labels:      map[string]string{"machine-controller/owned-by": "3f1c2a9e-0d4b-4e8a-9c1f-6a2b7d8e9f00", "zone": "fsn1"},
			Annotations: map[string]string{"cluster.k8s.io/machine": "kube-system/pool-a-m1", "note": "x"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since)},
		}},
	}
	want := &Node{Name: "pool-a-m1", Ready: "True", Since: since,
		OwnerUID: "3f1c2a9e-0d4b-4e8a-9c1f-6a2b7d8e9f00", OwnerMachine: "kube-system/pool-a-m1"}
	if got := NodeFrom(n); !reflect.DeepEqual(got, want) {
		t.Errorf("record\n got %+v\nwant %+v", got, want)
	}
	if got := NodeFrom(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}); !reflect.DeepEqual(got, &Node{Name: "bare"}) {
		t.Errorf("a Node without marks: %+v", got)
	}
}

// Get re-reads one Node past the cache: a missing Node is no error, and a
// refusal names the Node.
func TestNodes_GetReadsTheAPIServer(t *testing.T) {
	client := kubefake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	c := NewNodes(client, Options{})
	if got, err := c.Get(t.Context(), "n1"); err != nil || got == nil || got.Name != "n1" {
		t.Fatalf("Get(n1) = %+v, %v; want its record", got, err)
	}
	if got, err := c.Get(t.Context(), "absent"); got != nil || err != nil {
		t.Errorf("Get(absent) = %+v, %v; want nil, nil", got, err)
	}
	client.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("nodes"), "n1", errors.New("no"))
	})
	if _, err := c.Get(t.Context(), "n1"); !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), "get Node n1: ") {
		t.Errorf("Get refused = %v, want the Forbidden wrapped with the Node's name", err)
	}
}
