package e2e

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

type machineIssue struct {
	Pool, Machine, Reason, Message, Since string
}

type pool struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
	Ready    int    `json:"ready"`
	APIGroup string `json:"apiGroup"`
}

func issuesOf(b platformsim.Beat) ([]machineIssue, []pool) {
	var p struct {
		MachineIssues []machineIssue `json:"machineIssues"`
		Pools         []pool         `json:"pools"`
	}
	_ = json.Unmarshal(b.Body, &p)
	return p.MachineIssues, p.Pools
}

// createMachineObject creates obj with its status, as machine-controller
// would write them. machine-controller's Machine CRD has no status
// subresource, so the create keeps a Machine's status; a MachineDeployment's
// is written through its status subresource.
func createMachineObject(t *testing.T, ri dynamic.ResourceInterface, obj map[string]any) {
	t.Helper()
	status := obj["status"]
	created, err := ri.Create(ctxT(t), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status != nil && created.Object["status"] == nil {
		created.Object["status"] = status
		if _, err := ri.UpdateStatus(ctxT(t), created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestObserver_MachineIssuesAndPools(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	p, _ := startObserver(t, sim, "KUBEHZ_FULL_INTERVAL=1s")

	// No machine-controller CRDs: no keys, and one log line per resource
	// over several intervals, not one per interval.
	for range 4 {
		b := waitBeat(t, sim, after(sim.Seq(), nil))
		if is, ps := issuesOf(b); is != nil || ps != nil {
			t.Fatalf("beat carries machineIssues/pools without the CRDs: %v %v", is, ps)
		}
	}
	if n := strings.Count(p.Output(), "not readable"); n > 2 {
		t.Errorf("absent CRDs logged %d times; want at most once per resource", n)
	}

	mds, machines := installMachineCRDs(t)
	createPoolA(t, mds, machines)
	machineEvent := func(name, reason, message string) {
		c := suite.env.Client.CoreV1().Events("kube-system")
		now := metav1.Now()
		if _, err := c.Create(ctxT(t), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Machine", Namespace: "kube-system", Name: "pool-a-m2", APIVersion: "cluster.k8s.io/v1alpha1"},
			Type:           corev1.EventTypeWarning, Reason: reason, Message: message, Count: 3,
			FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "machine-controller"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	machineEvent("m2-retry", "ReconcilingError", "unsupported location for server type")
	machineEvent("m2-other", "FailedCreate", "some other warning") // not a retry loop (docs/contract.md#g-6)

	want := []machineIssue{
		{Pool: "pool-a", Machine: "pool-a-m1", Reason: "InvalidConfiguration", Message: "server type cpx99 does not exist"},
		{Pool: "pool-a", Machine: "pool-a-m2", Reason: "ReconcilingError", Message: "unsupported location for server type"},
	}
	var got []machineIssue
	var pools []pool
	waitBeat(t, sim, func(b platformsim.Beat) bool {
		got, pools = issuesOf(b)
		return len(got) == 2 && len(pools) == 1
	})
	for i := range got {
		if _, err := time.Parse(time.RFC3339, got[i].Since); err != nil {
			t.Errorf("issue %d since %q is not RFC 3339", i, got[i].Since)
		}
		got[i].Since = ""
	}
	sortIssues(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("machineIssues:\n got %+v\nwant %+v", got, want)
	}
	if wantPools := []pool{{Name: "pool-a", Replicas: 2, Ready: 1, APIGroup: "cluster.k8s.io"}}; !reflect.DeepEqual(pools, wantPools) {
		t.Errorf("pools = %+v, want %+v", pools, wantPools)
	}

	// Recovery: the terminal error is cleared and the retry loop stops.
	seq := sim.Seq()
	m1, err := machines.Get(ctxT(t), "pool-a-m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m1.Object["status"] = map[string]any{"nodeRef": map[string]any{"kind": "Node", "name": "pool-a-m1"}}
	if _, err := machines.Update(ctxT(t), m1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := suite.env.Client.CoreV1().Events("kube-system").Delete(ctxT(t), "m2-retry", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b := waitBeat(t, sim, func(b platformsim.Beat) bool { is, _ := issuesOf(b); return b.Seq > seq && len(is) == 0 })
	if _, ok := b.Payload["machineIssues"]; ok {
		t.Error("recovered machines still carry a machineIssues key; absence is what clears it")
	}
}

// installMachineCRDs installs machine-controller's CRDs for one test and
// returns the clients of its MachineDeployments and Machines in
// kube-system; both are gone after the test.
func installMachineCRDs(t *testing.T) (mds, machines dynamic.ResourceInterface) {
	t.Helper()
	crds, err := suite.env.InstallCRDs(kube.MachineCRDs)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mds, machines = dyn.Resource(clustersim.MachineDeploymentsGVR).Namespace("kube-system"), dyn.Resource(clustersim.MachinesGVR).Namespace("kube-system")
	t.Cleanup(func() {
		_ = machines.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = mds.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		if err := suite.env.UninstallCRDs(crds); err != nil {
			t.Error(err)
		}
	})
	return mds, machines
}

// createPoolA creates MachineDeployment pool-a (2 replicas, 1 ready), its
// Machine pool-a-m1 with a terminal error and pool-a-m2 linked to its node.
func createPoolA(t *testing.T, mds, machines dynamic.ResourceInterface) {
	t.Helper()
	createMachineObject(t, mds, map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "pool-a"},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"pool": "a"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"pool": "a"}}}},
		"status": map[string]any{"replicas": int64(2), "readyReplicas": int64(1)},
	})
	machine := func(name string, status map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "cluster.k8s.io/v1alpha1", "kind": "Machine",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"pool": "a"}},
			"spec":     map[string]any{},
			"status":   status,
		}
	}
	createMachineObject(t, machines, machine("pool-a-m1", map[string]any{
		"errorReason": "InvalidConfiguration", "errorMessage": "server type cpx99 does not exist"}))
	createMachineObject(t, machines, machine("pool-a-m2", map[string]any{
		"nodeRef": map[string]any{"kind": "Node", "name": "pool-a-m2"}}))
}

func sortIssues(is []machineIssue) {
	for i := 1; i < len(is); i++ {
		for j := i; j > 0 && is[j].Machine < is[j-1].Machine; j-- {
			is[j], is[j-1] = is[j-1], is[j]
		}
	}
}
