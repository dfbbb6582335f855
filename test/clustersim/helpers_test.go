package clustersim

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
)

// harness is one running simulator in a namespace of its own, so tests do
// not see each other's pools.
type harness struct {
	t   *testing.T
	sim *Sim
	ns  string
	dyn dynamic.Interface
}

// start runs a simulator until the test ends, then cancels it and requires
// Run to return nil promptly.
func start(t *testing.T, opts Options) *harness {
	t.Helper()
	h := prepare(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.sim.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
	return h
}

// prepare builds a simulator for a fresh namespace without running it.
func prepare(t *testing.T, opts Options) *harness {
	t.Helper()
	ns := "sim-" + rand.String(6)
	if _, err := env.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.Namespace = ns
	opts.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	sim, err := New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, sim: sim, ns: ns, dyn: dyn}
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func (h *harness) eventually(what string, timeout time.Duration, cond func() (bool, error)) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: not within %s (last error %v)", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *harness) converge(pool string) {
	h.t.Helper()
	h.eventually("pool "+pool+" converged", 20*time.Second, func() (bool, error) {
		return h.sim.Converged(h.t.Context(), pool)
	})
}

func (h *harness) createPool(pool string, replicas int64, opts PoolOptions) {
	h.t.Helper()
	if err := h.sim.CreatePool(h.t.Context(), pool, replicas, opts); err != nil {
		h.t.Fatal(err)
	}
}

// scale patches spec.replicas the way the actor does.
func (h *harness) scale(pool string, replicas int64) {
	h.t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if _, err := h.dyn.Resource(MachineDeploymentsGVR).Namespace(h.ns).Patch(h.t.Context(), pool, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubehz-agent"}); err != nil {
		h.t.Fatal(err)
	}
}

// machines lists the pool's Machines, deleting ones included, by name.
func (h *harness) machines(pool string) map[string]*unstructured.Unstructured {
	h.t.Helper()
	list, err := h.dyn.Resource(MachinesGVR).Namespace(h.ns).List(h.t.Context(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		if poolOf(&list.Items[i]) == pool {
			out[list.Items[i].GetName()] = &list.Items[i]
		}
	}
	return out
}

func (h *harness) md(pool string) *unstructured.Unstructured {
	h.t.Helper()
	md, err := h.dyn.Resource(MachineDeploymentsGVR).Namespace(h.ns).Get(h.t.Context(), pool, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return md
}

// statusCount reads one integer from the MachineDeployment's status.
func (h *harness) statusCount(pool, field string) int64 {
	h.t.Helper()
	n, _, _ := unstructured.NestedInt64(h.md(pool).Object, "status", field)
	return n
}

// node returns the Node name, or nil when it does not exist.
func (h *harness) node(name string) *corev1.Node {
	h.t.Helper()
	node, err := env.Client.CoreV1().Nodes().Get(h.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return node
}

func (h *harness) machineGone(name string) func() (bool, error) {
	return func() (bool, error) {
		_, err := h.dyn.Resource(MachinesGVR).Namespace(h.ns).Get(h.t.Context(), name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		return h.node(name) == nil, nil
	}
}
