package overlays

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
	"kubehz.dev/agent/test/releasemanifests"
)

// releaseFile renders one release's file of a tier (install-<tier>.yaml)
// from deploy/ with made-up digests, and decodes its objects as kubectl
// would read them.
func releaseFile(t *testing.T, version, tier string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := releasemanifests.Render(releasemanifests.Options{
		Root:    suite.env.Root,
		Version: version,
		Digests: map[string]string{
			"observer": "sha256:" + strings.Repeat("0a", 32),
			"actor":    "sha256:" + strings.Repeat("b1", 32),
		},
	}, tier)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	if len(objs) == 0 {
		t.Fatalf("install-%s.yaml holds no object", tier)
	}
	return objs
}

// createNamespace is the README's first install step; on a cluster lok8s
// set up, the namespace is already there.
func createNamespace(t *testing.T) {
	t.Helper()
	_, err := suite.env.Client.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-system"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// deleteFile deletes every object of a file as `kubectl delete -f` does:
// each by kind, namespace and name, in background propagation.
func deleteFile(t *testing.T, dyn dynamic.Interface, objs []*unstructured.Unstructured) {
	t.Helper()
	background := metav1.DeletePropagationBackground
	for _, o := range objs {
		gvr := resources(t, strings.ToLower(o.GetKind()))[0]
		err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Delete(ctxT(t), o.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// TestReleaseFiles_DeleteFLeavesTheNamespaceAndLok8sAlone installs each
// release file beside lok8s's objects the way the README says, then deletes
// every object in it as `kubectl delete -f install-<tier>.yaml` does. The
// delete is live (the file's own objects are gone); the namespace, not even
// terminating, the identity Secret, the marker, the CronJob and kube-system
// are all still there.
func TestReleaseFiles_DeleteFLeavesTheNamespaceAndLok8sAlone(t *testing.T) {
	createNamespace(t)
	lok8s := createLok8s(t)
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// The README's commands, one per tier: kubectl delete -f install-<tier>.yaml.
	cmds := readmeBlocks(t, "### Uninstall a release install", "sh")
	var tiers []string
	for line := range strings.Lines(strings.Join(cmds, "")) {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "kubectl" || f[1] != "delete" || f[2] != "-f" || !strings.HasPrefix(f[3], "install-") {
			t.Fatalf("README release uninstall line %q is not `kubectl delete -f install-<tier>.yaml`", line)
		}
		tiers = append(tiers, strings.TrimSuffix(strings.TrimPrefix(f[3], "install-"), ".yaml"))
	}
	if len(tiers) != len(releasemanifests.Tiers) {
		t.Fatalf("README has uninstall commands for %v, want one for each of %d release files", tiers, len(releasemanifests.Tiers))
	}
	for _, tier := range tiers {
		if releasemanifests.Tiers["install-"+tier+".yaml"] != tier {
			t.Fatalf("README deletes install-%s.yaml, which no release publishes", tier)
		}
		t.Run(tier, func(t *testing.T) {
			objs := releaseFile(t, "v1.0.0", tier)
			if err := suite.env.Apply(ctxT(t), objs); err != nil {
				t.Fatal(err)
			}
			deleteFile(t, dyn, objs)
			for _, o := range objs {
				if exists(t, dyn, o.GroupVersionKind(), o.GetNamespace(), o.GetName()) {
					t.Errorf("%s %s/%s survived its file's delete", o.GetKind(), o.GetNamespace(), o.GetName())
				}
			}
			for _, name := range []string{"kubehz-system", "kube-system"} {
				ns, err := suite.env.Client.CoreV1().Namespaces().Get(ctxT(t), name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("namespace %s: %v", name, err)
				}
				if ns.DeletionTimestamp != nil {
					t.Fatalf("deleting install-%s.yaml deletes the namespace %s, and with it lok8s's objects", tier, name)
				}
			}
			lok8s.check(t)
		})
	}
}

// TestReleaseUpgrade_KeepsTheUsersConfiguration installs release v1.0.0's
// managed tier as the README says (the settings ConfigMap first, then the
// file), runs the observer with the environment the cluster's Deployment
// gives its pod, then applies v1.1.0's file unedited and runs the new pod's
// observer: it still beats for the same cluster, the actor's pods would
// still start with it, and the user's ConfigMap is untouched.
func TestReleaseUpgrade_KeepsTheUsersConfiguration(t *testing.T) {
	sim := platformsim.New(platformsim.Options{})
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	// The README's install: the settings ConfigMap with the keys it names,
	// then the file applied server-side.
	install := strings.Join(readmeBlocks(t, "## Install", "sh"), "")
	for _, step := range []string{"create configmap kubehz-config", "kubectl apply --server-side -f install-$TIER.yaml"} {
		if !strings.Contains(install, step) {
			t.Fatalf("the README's install no longer says %q", step)
		}
	}
	values := map[string]string{"CLUSTER_ID": platformsim.DefaultClusterID, "KUBEHZ_API_URL": sim.URL()}
	settings := map[string]string{}
	for _, m := range regexp.MustCompile(`--from-literal=([A-Z_]+)=`).FindAllStringSubmatch(install, -1) {
		v, ok := values[m[1]]
		if !ok {
			t.Fatalf("the README's install sets %s, which this test has no value for", m[1])
		}
		settings[m[1]] = v
	}
	if len(settings) != len(values) {
		t.Fatalf("the README's install sets %v, want CLUSTER_ID and KUBEHZ_API_URL", settings)
	}
	createNamespace(t)
	cms := suite.env.Client.CoreV1().ConfigMaps("kubehz-system")
	if _, err := cms.Create(ctxT(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-config"}, Data: settings}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "kubehz-config", metav1.DeleteOptions{}) })

	for i, version := range []string{"v1.0.0", "v1.1.0"} {
		objs := releaseFile(t, version, "actor")
		if err := suite.env.Apply(ctxT(t), objs); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Cleanup(func() { deleteAll(t, objs) })
		}
		d, err := suite.env.Client.AppsV1().Deployments("kubehz-system").Get(ctxT(t), "observer", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Spec.Template.Labels[releasemanifests.VersionLabel]; got != version {
			t.Fatalf("after applying %s the observer's pods are labelled %q", version, got)
		}
		// The actor's pods start too: its own settings ConfigMap is
		// optional, and the shared one is the user's.
		if actor := clusterPodEnv(t, "actor"); !slices.Contains(actor, "CLUSTER_ID="+platformsim.DefaultClusterID) {
			t.Errorf("%s: the actor's pods get %v, without the user's CLUSTER_ID", version, actor)
		}
		sim.ResetRecords()
		p := runPod(t, "observer", "kubehz-observer", sim)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		b, err := sim.WaitBeat(ctx, func(platformsim.Beat) bool { return true })
		cancel()
		if err != nil {
			t.Fatalf("%s: no beat: %v\n%s", version, err, p.Output())
		}
		if b.ClusterID != platformsim.DefaultClusterID {
			t.Errorf("%s beats for cluster %q, want %q", version, b.ClusterID, platformsim.DefaultClusterID)
		}
		if code, err := p.Stop(20 * time.Second); err != nil || code != 0 {
			t.Fatalf("%s: the observer did not stop cleanly (code %d, %v)\n%s", version, code, err, p.Output())
		}
	}
	cm, err := cms.Get(ctxT(t), "kubehz-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != len(settings) || cm.Data["CLUSTER_ID"] != settings["CLUSTER_ID"] || cm.Data["KUBEHZ_API_URL"] != settings["KUBEHZ_API_URL"] {
		t.Errorf("after the upgrade kubehz-config holds %v, want %v", cm.Data, settings)
	}
}

// runPod runs the observer as Deployment name's pod would start now: with
// the env and envFrom the apiserver's Deployment gives, the ConfigMaps read
// from the apiserver (a missing one that is not optional keeps the pod from
// starting), under its ServiceAccount. The test adds only what the kubelet
// would: the token mount, the liveness file, and a fast cadence.
func runPod(t *testing.T, name, sa string, sim *platformsim.Server) *kube.Process {
	t.Helper()
	env := clusterPodEnv(t, name)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := suite.env.ServiceAccountKubeconfig(ctxT(t), "kubehz-system", sa, kubeconfig); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "agent-token")
	if err := os.WriteFile(token, []byte(platformsim.DefaultToken), 0o600); err != nil {
		t.Fatal(err)
	}
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "KUBEHZ_AGENT_TOKEN_FILE=") })
	env = append(env, "KUBEHZ_AGENT_TOKEN_FILE="+token, "KUBECONFIG="+kubeconfig,
		"KUBEHZ_LIVENESS_FILE="+filepath.Join(dir, "alive"),
		"KUBEHZ_FULL_INTERVAL=2s", "KUBEHZ_DEBOUNCE=200ms", "KUBEHZ_MIN_GAP=500ms")
	p, err := kube.StartProcess(suite.observerBin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.Stop(20 * time.Second) })
	return p
}

// clusterPodEnv is the environment the kubelet would give a new pod of
// Deployment name as the apiserver holds it now, except resource fields;
// it fails the test where the pod could not start for a missing ConfigMap.
func clusterPodEnv(t *testing.T, name string) []string {
	t.Helper()
	ns := "kubehz-system"
	d, err := suite.env.Client.AppsV1().Deployments(ns).Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	var env []string
	for _, f := range c.EnvFrom {
		if f.ConfigMapRef == nil {
			continue
		}
		cm, err := suite.env.Client.CoreV1().ConfigMaps(ns).Get(ctxT(t), f.ConfigMapRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && f.ConfigMapRef.Optional != nil && *f.ConfigMapRef.Optional {
			continue
		}
		if err != nil {
			t.Fatalf("the %s pod would not start: ConfigMap %s: %v", name, f.ConfigMapRef.Name, err)
		}
		for k, v := range cm.Data {
			env = append(env, k+"="+v)
		}
	}
	for _, v := range c.Env {
		switch {
		case v.ValueFrom == nil:
			env = append(env, v.Name+"="+v.Value)
		case v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, v.Name+"="+ns)
		case v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env = append(env, v.Name+"="+name+"-a")
		}
	}
	return env
}
