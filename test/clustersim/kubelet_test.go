package clustersim

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSim_AKubeletsStatusWriteSurvivesARacingController: machine-controller
// labels a Node and kube-controller-manager taints it whenever they choose,
// so a kubelet's status write can conflict with theirs. The simulated
// kubelet reads the Node again and its status still lands, beside the
// controller's label. The control: the racing write is made between the
// kubelet's read and its write, and the apiserver answered 409 to it once.
func TestSim_AKubeletsStatusWriteSurvivesARacingController(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	const name = "race-1"
	nodes := env.Client.CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	var raced atomic.Bool
	var conflicts atomic.Int32
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/nodes/"+name+"/status") && raced.CompareAndSwap(false, true) {
				label := []byte(`{"metadata":{"labels":{"machine-controller/owned-by":"race"}}}`)
				if _, err := nodes.Patch(r.Context(), name, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
					return nil, err
				}
			}
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode == http.StatusConflict {
				conflicts.Add(1)
			}
			return resp, err
		})
	})
	sim, err := New(cfg, Options{CloudDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sim.KeepAlive(name)
	since := time.Now().Add(-7 * time.Minute).Truncate(time.Second)
	if err := sim.SetNodeCondition(ctx, name, corev1.ConditionFalse, since); err != nil {
		t.Fatalf("the kubelet's status write failed: %v", err)
	}
	if !raced.Load() || conflicts.Load() != 1 {
		t.Fatalf("raced %v, conflicts %d: want the controller's write to land first and cost the kubelet one 409", raced.Load(), conflicts.Load())
	}
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := readyCondition(n)
	if c == nil || c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(since) {
		t.Errorf("Ready condition %+v, want False since %s", c, since)
	}
	if n.Labels["machine-controller/owned-by"] != "race" {
		t.Errorf("labels %v: the controller's label was lost", n.Labels)
	}
}

// TestSim_AKubeletRegistersItsNodeOnceAndNotAgainAfterADelete: a real
// kubelet registers its Node when it starts and never again, so a Node
// deleted under a live kubelet stays deleted. machine-controller deletes a
// Machine's server, then its Node; a simulator that re-registered a missing
// Node could, in a pass that read the server before its deletion, bring
// the Node back with no Machine left to delete it (a demo's healed worker
// then never went away). The control: the same passes register the Node
// while it is missing and the kubelet has not registered it yet.
func TestSim_AKubeletRegistersItsNodeOnceAndNotAgainAfterADelete(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	const name = "once-1"
	dir := t.TempDir()
	srv := `{"machine":"once-1","namespace":"kube-system","uid":"uid-once-1","hostname":"once-1","address":"10.0.0.9","kubelet":"v1.35.5"}`
	if err := os.WriteFile(filepath.Join(dir, "uid-once-1.json"), []byte(srv), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := env.Client.CoreV1().Nodes()
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	sim, err := New(env.Config, Options{CloudDir: dir, JoinDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The first pass finds the server; the next, after the join delay,
	// registers the Node.
	for range 2 {
		if err := sim.pass(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := nodes.Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the kubelet did not register its missing Node (the control): %v", err)
	}
	if err := nodes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := sim.pass(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := nodes.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("pass %d after the delete: Node %s is back (created %s, err %v)", i+1, name, n.CreationTimestamp, err)
		}
	}
}

// TestNewNode_ARegistrationKeepsTheReadinessATestSet: a kubelet that
// registers after a test set it NotReady since minutes ago posts that
// transition time, as its later status writes do; one no test set began now.
func TestNewNode_ARegistrationKeepsTheReadinessATestSet(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 5, 9, 36, 47, 0, time.UTC))
	since := now.Add(-5 * time.Minute)
	for _, tc := range []struct {
		name  string
		k     *kubelet
		ready corev1.ConditionStatus
		since time.Time
	}{
		{"set by a test", &kubelet{srv: server{Hostname: "n1"}, ready: corev1.ConditionFalse, since: since}, corev1.ConditionFalse, since},
		{"never set", &kubelet{srv: server{Hostname: "n1"}, ready: corev1.ConditionTrue}, corev1.ConditionTrue, now.Time},
	} {
		node := newNode(tc.k, nil, now)
		c := node.Status.Conditions[0]
		if c.Type != corev1.NodeReady || c.Status != tc.ready || !c.LastTransitionTime.Time.Equal(tc.since) || !c.LastHeartbeatTime.Equal(&now) {
			t.Errorf("%s: Ready condition %+v, want %s since %s, heartbeat %s", tc.name, c, tc.ready, tc.since, now)
		}
	}
}
