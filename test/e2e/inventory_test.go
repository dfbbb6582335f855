package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

var inventoryGVR = schema.GroupVersionResource{Group: "lok8s.dev", Version: "v1alpha1", Resource: "clusterinventories"}

func inventories(t *testing.T) dynamic.ResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(inventoryGVR)
}

func inventorySpec() map[string]any {
	return map[string]any{
		"lok8sVersion": "0.9.1", "kind": "hetzner", "provider": "hcloud", "kubernetesVersion": "v1.37.2",
		"specHash": "sha256:abc", "renderedAt": "2026-11-30T06:00:00Z",
		"addons": []any{
			map[string]any{"name": "cilium", "chartVersion": "1.16.1", "appVersion": "1.16.1", "category": "cni", "source": "addon"},
			map[string]any{"name": "my-app", "source": "target"},
		},
	}
}

// installInventory installs the ClusterInventory CRD and creates the
// singleton for one test; both are gone after it.
func installInventory(t *testing.T) {
	t.Helper()
	crds, err := suite.env.InstallCRDs(kube.InventoryCRD)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = inventories(t).Delete(context.Background(), "cluster", metav1.DeleteOptions{})
		if err := suite.env.UninstallCRDs(crds); err != nil {
			t.Error(err)
		}
	})
	createInventory(t)
}

// createInventory creates the singleton with spec and, as another writer
// would, an observedAddons status entry that the observer must never touch.
func createInventory(t *testing.T) {
	t.Helper()
	ri := inventories(t)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "lok8s.dev/v1alpha1", "kind": "ClusterInventory",
		"metadata": map[string]any{"name": "cluster"},
		"spec":     inventorySpec(),
	}}
	created, err := ri.Create(ctxT(t), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"observedAddons": []any{map[string]any{"name": "cilium", "version": "1.16.1"}}}
	if _, err := ri.UpdateStatus(ctxT(t), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getInventory(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u, err := inventories(t).Get(ctxT(t), "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// waitInventory polls the CR until ok accepts it.
func waitInventory(t *testing.T, what string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(beatWait)
	for {
		u := getInventory(t)
		if ok(u) {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClusterInventory never got %s; status %v", what, u.Object["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quietFor lets n more beats be accepted and then checks the CR was not
// written meanwhile: every write stamps lastReported, so a patch always
// moves the resourceVersion.
func quietFor(t *testing.T, sim *platformsim.Server, n int, why string) {
	t.Helper()
	rv := getInventory(t).GetResourceVersion()
	for range n {
		waitBeat(t, sim, after(sim.Seq(), nil))
	}
	if now := getInventory(t).GetResourceVersion(); now != rv {
		t.Fatalf("%s: the status was written (resourceVersion %s → %s)", why, rv, now)
	}
}

func updatesOf(u *unstructured.Unstructured) ([]any, bool) {
	list, found, err := unstructured.NestedSlice(u.Object, "status", "availableUpdates")
	return list, found && err == nil
}

func TestObserver_InventoryMirrorAndVerdictWriteBack(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	sim := startSim(t, platformsim.Options{})
	p, _ := startObserver(t, sim, "KUBEHZ_FULL_INTERVAL=1s")

	// No CRD yet: no beat carries an inventory key, and nothing is logged.
	for range 3 {
		b := waitBeat(t, sim, after(sim.Seq(), nil))
		if _, ok := b.Payload["inventory"]; ok {
			t.Fatal("a beat carries an inventory without any ClusterInventory")
		}
	}
	if strings.Contains(strings.ToLower(p.Output()), "clusterinventor") {
		t.Errorf("an absent ClusterInventory CRD was logged; it must be silent")
	}

	installInventory(t)
	b := waitBeat(t, sim, func(b platformsim.Beat) bool { _, ok := b.Payload["inventory"]; return ok })
	if got := normalize(b.Payload["inventory"]); !reflect.DeepEqual(got, normalize(inventorySpec())) {
		t.Errorf("inventory on the beat:\n got %v\nwant %v", got, inventorySpec())
	}

	cilium := []platformsim.AvailableUpdate{{Name: "cilium", Current: "1.16.1", Latest: "1.17.4"}}
	sim.SetAvailableUpdates(cilium)
	u := waitInventory(t, "the verdict", func(u *unstructured.Unstructured) bool { l, ok := updatesOf(u); return ok && len(l) == 1 })
	want := []any{map[string]any{"name": "cilium", "current": "1.16.1", "latest": "1.17.4"}}
	if l, _ := updatesOf(u); !reflect.DeepEqual(l, want) {
		t.Errorf("availableUpdates = %v, want %v", l, want)
	}
	stamp, _, _ := unstructured.NestedString(u.Object, "status", "lastReported")
	if ts, err := time.Parse(time.RFC3339, stamp); err != nil || !strings.HasSuffix(stamp, "Z") || ts.Before(start) {
		t.Errorf("lastReported %q is not an RFC 3339 UTC time stamped since the test began at %s", stamp, start.Format(time.RFC3339))
	}
	if obs, _, _ := unstructured.NestedSlice(u.Object, "status", "observedAddons"); len(obs) != 1 {
		t.Errorf("observedAddons was touched: %v", obs)
	}
	if spec, _, _ := unstructured.NestedMap(u.Object, "spec"); !reflect.DeepEqual(normalize(spec), normalize(inventorySpec())) {
		t.Errorf("spec changed: %v", spec)
	}

	quietFor(t, sim, 3, "the same verdict again")
	sim.SetAvailableUpdates(nil) // the key absent: no verdict
	quietFor(t, sim, 3, "beats without a verdict")
	sim.SetAvailableUpdates([]platformsim.AvailableUpdate{{Name: ""}})
	quietFor(t, sim, 3, "a verdict whose entries are all invalid")

	sim.SetAvailableUpdates([]platformsim.AvailableUpdate{})
	waitInventory(t, "an explicit empty list", func(u *unstructured.Unstructured) bool { l, ok := updatesOf(u); return ok && len(l) == 0 })
	quietFor(t, sim, 3, "an already clear status and [] again")

	// A fresh CR: the first verdict is written even when it is [], so
	// lastReported says the index was consulted; then nothing more.
	if err := inventories(t).Delete(ctxT(t), "cluster", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createInventory(t)
	u = waitInventory(t, "a first empty verdict on a fresh CR", func(u *unstructured.Unstructured) bool {
		l, ok := updatesOf(u)
		return ok && len(l) == 0
	})
	if stamp, _, _ := unstructured.NestedString(u.Object, "status", "lastReported"); stamp == "" {
		t.Error("the first verdict on a fresh CR did not stamp lastReported")
	}
	quietFor(t, sim, 3, "[] repeated on a fresh CR already cleared")
}

// normalize turns JSON numbers and typed maps into comparable plain values.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}
