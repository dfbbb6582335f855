package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/platformsim"
)

// TestActor_RefusesWhatItMustNotTouch asks, in one revision, to scale five
// pools the guardrails protect and two names that match nothing: each is
// refused with its reason and none is patched. The control rides the same
// revision: pool-ok, which nothing protects, is scaled, so the refusals are
// the guardrails' doing, not an actor that acts on nothing.
func TestActor_RefusesWhatItMustNotTouch(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	pools := []struct {
		name string
		opts clustersim.PoolOptions
	}{
		{"prod-cp-1", clustersim.PoolOptions{}},
		{"pool-as", clustersim.PoolOptions{Annotations: map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}}},
		{"pool-big", clustersim.PoolOptions{}},
		{"pool-label", clustersim.PoolOptions{Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}}},
		{"pool-ok", clustersim.PoolOptions{}},
		{"untouched", clustersim.PoolOptions{}},
	}
	for _, p := range pools {
		if err := world.CreatePool(ctxT(t), p.name, 1, p.opts); err != nil {
			t.Fatal(err)
		}
	}
	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 8, Execution: map[string]any{"scaling": true}, WorkerPools: []desiredPool{
		{Name: "prod-cp-1", DesiredReplicas: 2}, {Name: "pool-as", DesiredReplicas: 2}, {Name: "pool-big", DesiredReplicas: 51},
		{Name: "pool-label", DesiredReplicas: 2}, {Name: "ghost", DesiredReplicas: 2}, {Name: "Not A Name!", DesiredReplicas: 2},
		{Name: "pool-ok", DesiredReplicas: 2},
	}}, `"8-100"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-refuse")

	refused := map[string]string{
		"prod-cp-1": "control-plane", "pool-as": "cluster-autoscaler", "pool-big": "KUBEHZ_MAX_REPLICAS",
		"pool-label": "control-plane", "ghost": "no MachineDeployment", "Not A Name!": "invalid pool name",
	}
	b := waitBeat(t, sim, func(b platformsim.Beat) bool {
		a, ok := findAction(actionsOf(b), "scale", "pool-ok")
		return len(actionsOf(b)) == len(refused)+1 && ok && a.Status == "done"
	})
	for _, a := range actionsOf(b) {
		if a.Target == "pool-ok" {
			continue
		}
		if a.Status != "failed" || !strings.Contains(a.Detail, refused[a.Target]) || a.Revision != 8 {
			t.Errorf("%s: %s %q, want failed mentioning %q", a.Target, a.Status, a.Detail, refused[a.Target])
		}
	}
	for _, p := range pools {
		want := int64(1)
		if p.name == "pool-ok" {
			want = 2
		}
		if n := replicasOf(t, mds, p.name); n != want {
			t.Errorf("%s at %d replicas, want %d", p.name, n, want)
		}
	}
	// A patch refused with 409 (the MachineDeployment changed between the
	// actor's read and its write) is decided again and sent again, so
	// pool-ok may be asked twice; it must be changed once, and nothing
	// else asked at all.
	patched, applied := map[string]bool{}, 0
	for _, e := range actorRequests(t, start) {
		if e.Verb != "patch" || e.Resource() != "machinedeployments" || e.ObjectRef == nil {
			continue
		}
		patched[e.ObjectRef.Name] = true
		if e.ObjectRef.Name == "pool-ok" && e.ResponseStatus != nil && e.ResponseStatus.Code/100 == 2 {
			applied++
		}
	}
	if got := slices.Sorted(maps.Keys(patched)); !slices.Equal(got, []string{"pool-ok"}) {
		t.Errorf("the actor patched %v, want pool-ok alone", got)
	}
	if applied != 1 {
		t.Errorf("%d patches of pool-ok were applied, want 1", applied)
	}
}

// TestActor_EveryFlagOffMeansNoRequestAndNoReport gives each job a reason
// to act (a bigger pool, a newer kubelet, a worker dead for 5 minutes under
// an enabled healing policy) with every execution flag off: no request
// reaches the machine-controller APIs, nodes or pods, and no report rides
// the beat. The control follows on the same cluster and actor: with the
// flags turned on one at a time, each job acts. The dead worker's kubelet
// reports NotReady dated 5 minutes back, so the test need not wait them out.
func TestActor_EveryFlagOffMeansNoRequestAndNoReport(t *testing.T) {
	start := time.Now()
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-a", 1, clustersim.PoolOptions{Kubelet: "v1.35.5"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pool-a has a Ready worker", time.Minute, func() bool { return readyReplacement(t, world, "pool-a", 1, "") })
	dead := poolMachines(t, world, "pool-a")[0]
	if err := world.SetNodeCondition(ctxT(t), dead.Node, corev1.ConditionFalse, time.Now().Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, platformsim.Options{})
	doc := func(rev int64, flags map[string]any) desiredDoc {
		return desiredDoc{Revision: rev, KubernetesVersion: "v1.35.6", Execution: flags, Healing: healPolicy(1),
			WorkerPools: []desiredPool{{Name: "pool-a", DesiredReplicas: 4}}}
	}
	if err := sim.SetDesired(doc(3, map[string]any{"scaling": false, "upgrades": false, "healing": false}), `"3-000"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-off")
	// Several polls at 1 s.
	ctx, cancel := context.WithTimeout(context.Background(), beatWait)
	defer cancel()
	for n := 0; n < 4; n++ {
		seq := sim.Seq()
		if _, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool { return r.Seq > seq && r.Endpoint == platformsim.EndpointDesired }); err != nil {
			t.Fatal(err)
		}
	}
	b := waitBeat(t, sim, after(sim.Seq(), nil))
	if _, ok := b.Payload["actions"]; ok {
		t.Errorf("a beat carries actions while nothing is authorized")
	}
	if n := replicasOf(t, mds, "pool-a"); n != 1 {
		t.Errorf("pool-a changed to %d", n)
	}
	off := time.Now()
	for _, e := range actorRequests(t, start) {
		if !e.RequestReceived.Before(off) {
			continue
		}
		switch r := e.Resource(); r {
		case "machinedeployments", "machines", "nodes", "pods":
			t.Errorf("with every flag off the actor sent %s %s", e.Verb, r)
		}
	}

	// The control: each flag on its own, each job acts on its reason.
	if err := sim.SetDesired(doc(4, map[string]any{"healing": true}), `"4-000"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the control: healing deletes the dead worker's Machine", time.Minute, func() bool {
		return slices.ContainsFunc(actorRequests(t, off), request("delete", "machines", dead.Name))
	})
	if err := sim.SetDesired(doc(5, map[string]any{"scaling": true}), `"5-000"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the control: scaling takes pool-a to 4", time.Minute, func() bool { return replicasOf(t, mds, "pool-a") == 4 })
	if err := sim.SetDesired(doc(6, map[string]any{"upgrades": true}), `"6-000"`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the control: the upgrade sets pool-a's kubelet to v1.35.6", time.Minute, func() bool {
		return kubeletOf(t, mds, "pool-a") == "v1.35.6"
	})
}

// kubeletOf reads the kubelet version of a MachineDeployment's template.
func kubeletOf(t *testing.T, mds dynamic.ResourceInterface, name string) string {
	t.Helper()
	u, err := mds.Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "versions", "kubelet")
	return v
}
