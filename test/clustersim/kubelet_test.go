package clustersim

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
