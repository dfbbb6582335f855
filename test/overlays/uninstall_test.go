package overlays

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// deletion is one README uninstall command: kubectl delete KINDS -A -l SELECTOR.
type deletion struct{ kinds, selector string }

func parseDeletion(t *testing.T, cmd string) deletion {
	t.Helper()
	f := strings.Fields(cmd)
	if len(f) != 6 || f[0] != "kubectl" || f[1] != "delete" || f[3] != "-A" || f[4] != "-l" {
		t.Fatalf("README uninstall command %q is not `kubectl delete KINDS -A -l SELECTOR`", cmd)
	}
	return deletion{kinds: f[2], selector: f[5]}
}

// resources resolves kubectl's kind names (short names, singulars) the way
// kubectl does, through discovery.
func resources(t *testing.T, kinds string) []schema.GroupVersionResource {
	t.Helper()
	disco := suite.env.Client.Discovery()
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), disco, nil)
	var out []schema.GroupVersionResource
	for _, k := range strings.Split(kinds, ",") {
		gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: k})
		if err != nil {
			t.Fatalf("kind %q: %v", k, err)
		}
		out = append(out, gvr)
	}
	return out
}

// run deletes what the command selects, in every namespace, and returns
// what it deleted as kind namespace/name.
func (d deletion) run(t *testing.T, dyn dynamic.Interface) []string {
	t.Helper()
	var deleted []string
	for _, gvr := range resources(t, d.kinds) {
		list, err := dyn.Resource(gvr).List(ctxT(t), metav1.ListOptions{LabelSelector: d.selector})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range list.Items {
			err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Delete(ctxT(t), o.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("delete %s %s/%s: %v", gvr.Resource, o.GetNamespace(), o.GetName(), err)
			}
			deleted = append(deleted, gvr.Resource+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return deleted
}

// left lists what the selector still matches, over the same kinds.
func (d deletion) left(t *testing.T, dyn dynamic.Interface, selector string) []string {
	t.Helper()
	var out []string
	for _, gvr := range resources(t, d.kinds) {
		list, err := dyn.Resource(gvr).List(ctxT(t), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			out = append(out, gvr.Resource+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

// TestUninstall_EachTierLeavesNothingOfOursAndLok8sUntouched installs the
// managed tier with both components beside lok8s-like objects, runs the
// README's two commands in turn, and checks after each what is gone.
func TestUninstall_EachTierLeavesNothingOfOursAndLok8sUntouched(t *testing.T) {
	cmds := readmeBlocks(t, "### Uninstall a checkout install", "sh")
	if len(cmds) != 2 {
		t.Fatalf("README Uninstall a checkout install has %d command blocks, want the actor's and the observer's", len(cmds))
	}
	actorTier, observerTier := parseDeletion(t, cmds[0]), parseDeletion(t, cmds[1])
	if actorTier.kinds != observerTier.kinds {
		t.Errorf("the two commands delete different kinds:\n%s\n%s", actorTier.kinds, observerTier.kinds)
	}
	for _, kind := range strings.Split(actorTier.kinds, ",") {
		if kind == "ns" || kind == "namespace" || kind == "namespaces" || kind == "secret" || kind == "secrets" || kind == "cronjob" || kind == "cronjobs" {
			t.Fatalf("an uninstall command deletes %s, which holds or is lok8s's", kind)
		}
	}

	objs := render(t, filepath.Join("testdata", "components"))
	if err := suite.env.Apply(ctxT(t), objs); err != nil {
		t.Fatal(err)
	}
	lok8s := createLok8s(t)
	dyn, err := dynamic.NewForConfig(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ours := "app.kubernetes.io/instance=kubehz-agent"

	// Every object we rendered must be reachable by one of the two commands.
	for _, o := range objs {
		l := o.GetLabels()
		if o.GetKind() == "Namespace" {
			if _, has := l["app.kubernetes.io/instance"]; has {
				t.Errorf("the shared Namespace carries the instance label")
			}
			continue
		}
		if l["app.kubernetes.io/instance"] != "kubehz-agent" || (l["app.kubernetes.io/component"] != "actor" && l["app.kubernetes.io/component"] != "observer") {
			t.Errorf("%s %s lacks the instance or component label: %v", o.GetKind(), o.GetName(), l)
		}
	}

	deleted := actorTier.run(t, dyn)
	if len(deleted) == 0 {
		t.Fatal("the actor's command deleted nothing")
	}
	if left := actorTier.left(t, dyn, actorTier.selector); len(left) > 0 {
		t.Errorf("after the actor's uninstall, still there: %v", left)
	}
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/component"] != "observer" {
			continue
		}
		if !exists(t, dyn, o.GroupVersionKind().GroupVersion().WithKind(o.GetKind()), o.GetNamespace(), o.GetName()) {
			t.Errorf("the actor's uninstall removed the observer's %s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	lok8s.check(t)

	observerTier.run(t, dyn)
	if left := observerTier.left(t, dyn, ours); len(left) > 0 {
		t.Errorf("after both uninstalls, still there: %v", left)
	}
	// The listing above only sees the kinds the commands name; every object
	// we applied must be gone, whatever its kind, so a kind shipped later
	// and missing from the README's list fails here.
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		if exists(t, dyn, o.GroupVersionKind().GroupVersion().WithKind(o.GetKind()), o.GetNamespace(), o.GetName()) {
			t.Errorf("after both uninstalls, %s %s/%s is still there", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	lok8s.check(t)
}

// lok8sObjects are what lok8s keeps next to the agent: the namespace, the
// identity Secret, the heartbeat-owner marker, the CronJob, and something
// in kube-system. They share part-of: kubehz, as lok8s's could.
type lok8sObjects struct{ secret, marker, cronJob, system string }

func createLok8s(t *testing.T) lok8sObjects {
	t.Helper()
	c := suite.env.Client
	labels := map[string]string{"app.kubernetes.io/part-of": "kubehz", "app.kubernetes.io/instance": "lok8s"}
	meta := func(ns, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
	}
	ctx := ctxT(t)
	// Gone again when the test ends, so each test that needs them creates
	// them afresh.
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.CoreV1().Secrets("kubehz-system").Delete(ctx, "kubehz-agent", metav1.DeleteOptions{})
		_ = c.CoreV1().ConfigMaps("kubehz-system").Delete(ctx, "kubehz-agent-config", metav1.DeleteOptions{})
		_ = c.BatchV1().CronJobs("kubehz-system").Delete(ctx, "lok8s-heartbeat", metav1.DeleteOptions{})
		_ = c.CoreV1().ConfigMaps("kube-system").Delete(ctx, "lok8s-inventory", metav1.DeleteOptions{})
	})
	if _, err := c.CoreV1().Secrets("kubehz-system").Create(ctx, &corev1.Secret{ObjectMeta: meta("kubehz-system", "kubehz-agent"),
		StringData: map[string]string{"agent-token": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("kubehz-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("kubehz-system", "kubehz-agent-config"),
		Data: map[string]string{"heartbeat-owner": "operator"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.CronJob{ObjectMeta: meta("kubehz-system", "lok8s-heartbeat"), Spec: batchv1.CronJobSpec{
		Schedule: "* * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "beat", Image: "lok8s/heartbeat"}},
		}}}},
	}}
	if _, err := c.BatchV1().CronJobs("kubehz-system").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("kube-system", "lok8s-inventory")},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return lok8sObjects{secret: "kubehz-agent", marker: "kubehz-agent-config", cronJob: "lok8s-heartbeat", system: "lok8s-inventory"}
}

func (l lok8sObjects) check(t *testing.T) {
	t.Helper()
	c, ctx := suite.env.Client, ctxT(t)
	get := map[string]error{}
	_, get["namespace kubehz-system"] = c.CoreV1().Namespaces().Get(ctx, "kubehz-system", metav1.GetOptions{})
	_, get["secret "+l.secret] = c.CoreV1().Secrets("kubehz-system").Get(ctx, l.secret, metav1.GetOptions{})
	_, get["configmap "+l.marker] = c.CoreV1().ConfigMaps("kubehz-system").Get(ctx, l.marker, metav1.GetOptions{})
	_, get["cronjob "+l.cronJob] = c.BatchV1().CronJobs("kubehz-system").Get(ctx, l.cronJob, metav1.GetOptions{})
	_, get["configmap kube-system/"+l.system] = c.CoreV1().ConfigMaps("kube-system").Get(ctx, l.system, metav1.GetOptions{})
	for what, err := range get {
		if err != nil {
			t.Errorf("lok8s's %s: %v", what, err)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
