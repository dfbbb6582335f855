package overlays

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestOverlay_NamespaceWithTheReadmeSnippet renders the README's namespace:
// overlay over deploy/actor: the machine Roles stay in kube-system, and the
// observer reads Machines while the actor leads and scales from "agents".
func TestOverlay_NamespaceWithTheReadmeSnippet(t *testing.T) {
	blocks := readmeBlocks(t, "### Overlays", "yaml")
	var k map[string]any
	if err := yaml.Unmarshal([]byte(blocks[0]), &k); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, filepath.Join(suite.env.Root, "deploy", "actor"))
	if err != nil {
		t.Fatal(err)
	}
	k["resources"] = []string{rel}
	b, err := yaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	objs := render(t, dir)
	// The check must have objects to check: exactly the machine Roles and
	// their bindings, each still in kube-system.
	var machineRBAC []string
	for _, o := range objs {
		if !strings.HasSuffix(o.GetName(), "-machines") {
			continue
		}
		machineRBAC = append(machineRBAC, o.GetKind()+"/"+o.GetName())
		if o.GetNamespace() != "kube-system" {
			t.Errorf("%s %s moved to %q; the snippet must keep it in kube-system", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	slices.Sort(machineRBAC)
	if want := []string{
		"Role/kubehz-actor-machines", "Role/kubehz-observer-machines",
		"RoleBinding/kubehz-actor-machines", "RoleBinding/kubehz-observer-machines",
	}; !slices.Equal(machineRBAC, want) {
		t.Errorf("machine RBAC rendered: %v, want %v", machineRBAC, want)
	}
	runTier(t, objs, "agents", "", "pool-ns")
}

// TestOverlay_NamePrefixActorLeadsAndActs: a prefixed managed tier finds its
// own Deployment, Lease and report ConfigMap by their prefixed names.
func TestOverlay_NamePrefixActorLeadsAndActs(t *testing.T) {
	runTier(t, render(t, filepath.Join("testdata", "prefix")), "kubehz-system", "team-", "pool-prefix")
}

// runTier applies a rendered managed tier, runs both binaries under its
// ServiceAccounts with the environment its Deployments give them, and
// proves the observer reads Machines and the actor leads and scales.
func runTier(t *testing.T, objs []*unstructured.Unstructured, ns, prefix, pool string) {
	if err := suite.env.Apply(ctxT(t), objs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, objs) })
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), pool, 2, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.WaitUntil(t, pool+" converges at 2", func() bool { ok, _ := world.Converged(ctxT(t), pool); return ok })
	// A pool whose one server the cloud refuses: machine-controller marks
	// its Machine failed, which the observer reports only if it can read
	// Machines.
	broken := pool + "-broken"
	if err := world.FailCreates(broken, "quota exceeded"); err != nil {
		t.Fatal(err)
	}
	if err := world.CreatePool(ctxT(t), broken, 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}

	sim := platformsim.New(platformsim.Options{})
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	if err := sim.SetDesired(map[string]any{"revision": 3,
		"workerPools": []map[string]any{{"name": pool, "machineType": "cpx31", "desiredReplicas": 3}},
		"execution":   map[string]any{"scaling": true}}, `"3-1"`); err != nil {
		t.Fatal(err)
	}
	observer := start(t, suite.observerBin, objs, prefix+"observer", ns, prefix+"kubehz-observer", sim)
	start(t, suite.actorBin, objs, prefix+"actor", ns, prefix+"kubehz-actor", sim)

	waitBeat(t, sim, "a beat carrying the broken Machine", func(p beat) bool {
		for _, i := range p.MachineIssues {
			if i.Pool == broken {
				return true
			}
		}
		return false
	})
	if !strings.Contains(observer.Output(), "Machines readable; watching") {
		t.Error("the observer never logged Machines readable")
	}
	kube.WaitUntil(t, "the prefixed Lease held by actor-a", func() bool {
		l, err := suite.env.Client.CoordinationV1().Leases(ns).Get(ctxT(t), prefix+"kubehz-actor", metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && strings.HasPrefix(*l.Spec.HolderIdentity, "actor-a_")
	})
	kube.WaitUntil(t, pool+" patched to 3", func() bool {
		u, err := mds.Get(ctxT(t), pool, metav1.GetOptions{})
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return err == nil && n == 3
	})
	waitBeat(t, sim, "the scale report folded into a beat", func(p beat) bool {
		for _, a := range p.Actions {
			if a.Type == "scale" && a.Target == pool && a.Status == "done" && a.Revision == 3 {
				return true
			}
		}
		return false
	})
}

type beat struct {
	MachineIssues []struct{ Pool string } `json:"machineIssues"`
	Actions       []struct {
		Type, Target, Status string
		Revision             int64
	} `json:"actions"`
}

func waitBeat(t *testing.T, sim *platformsim.Server, what string, match func(beat) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, err := sim.WaitBeat(ctx, func(b platformsim.Beat) bool {
		var p beat
		return json.Unmarshal(b.Body, &p) == nil && match(p)
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// start runs bin as the pod of Deployment name would: under its
// ServiceAccount, with the env and envFrom the rendered Deployment gives
// (the downward API's namespace and pod name resolved), then the test's
// platform, token and cadence.
func start(t *testing.T, bin string, objs []*unstructured.Unstructured, name, ns, sa string, sim *platformsim.Server) *kube.Process {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := suite.env.ServiceAccountKubeconfig(ctxT(t), ns, sa, kubeconfig); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "agent-token")
	if err := os.WriteFile(token, []byte(platformsim.DefaultToken), 0o600); err != nil {
		t.Fatal(err)
	}
	given := kube.AgentEnv{PlatformURL: sim.URL(), TokenFile: token, Kubeconfig: kubeconfig, LivenessFile: filepath.Join(dir, "alive")}
	env := append(podEnv(t, objs, name, ns, strings.TrimPrefix(name, "team-")+"-a"), given.List(
		"KUBEHZ_FULL_INTERVAL=2s", "KUBEHZ_DEBOUNCE=200ms", "KUBEHZ_MIN_GAP=500ms",
		"KUBEHZ_DESIRED_POLL_SECONDS=1")...)
	p, err := kube.StartProcess(bin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if code, err := p.Stop(20 * time.Second); err != nil || code != 0 {
			t.Errorf("%s did not stop cleanly (code %d, %v)", name, code, err)
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.Output())
		}
	})
	return p
}

// podEnv is the environment the kubelet would give Deployment name's first
// container, except resource fields.
func podEnv(t *testing.T, objs []*unstructured.Unstructured, name, ns, pod string) []string {
	t.Helper()
	find := func(kind, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
		t.Fatalf("no %s %s rendered", kind, name)
		return nil
	}
	d := find("Deployment", name)
	if d.GetNamespace() != ns {
		t.Fatalf("Deployment %s in %q, want %q", name, d.GetNamespace(), ns)
	}
	// NoCopy: a render holds plain ints, which the copying helpers refuse.
	containers, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "template", "spec", "containers")
	c := containers.([]any)[0].(map[string]any)
	var env []string
	from, _, _ := unstructured.NestedFieldNoCopy(c, "envFrom")
	for _, f := range from.([]any) {
		cm, _, _ := unstructured.NestedString(f.(map[string]any), "configMapRef", "name")
		data, _, _ := unstructured.NestedStringMap(find("ConfigMap", cm).Object, "data")
		for k, v := range data {
			env = append(env, k+"="+v)
		}
	}
	vars, _, _ := unstructured.NestedFieldNoCopy(c, "env")
	for _, v := range vars.([]any) {
		m := v.(map[string]any)
		key := m["name"].(string)
		if val, ok := m["value"].(string); ok {
			env = append(env, key+"="+val)
		}
		switch path, _, _ := unstructured.NestedString(m, "valueFrom", "fieldRef", "fieldPath"); path {
		case "metadata.namespace":
			env = append(env, key+"="+ns)
		case "metadata.name":
			env = append(env, key+"="+pod)
		}
	}
	return env
}

// machineWorld runs, for one test, the real controllers and the simulated
// cloud and kubelets over the suite's CRDs, and clears what they managed
// when the test ends.
func machineWorld(t *testing.T) (*clustersim.World, dynamic.ResourceInterface) {
	t.Helper()
	world, err := clustersim.StartWorld(ctxT(t), suite.env, t.TempDir(), clustersim.Options{JoinDelay: 300 * time.Millisecond}, kube.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(world.Controllers.PostMortem())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := world.Close(ctx, suite.env); err != nil {
			t.Error(err)
		}
	})
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return world, dyn.Resource(clustersim.MachineDeploymentsGVR).Namespace("kube-system")
}

// deleteAll removes a rendered tier but its Namespace, so the next test
// starts clean.
func deleteAll(t *testing.T, objs []*unstructured.Unstructured) {
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Error(err)
		return
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		gvr := resources(t, strings.ToLower(o.GetKind()))[0]
		_ = dyn.Resource(gvr).Namespace(o.GetNamespace()).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
	}
}
