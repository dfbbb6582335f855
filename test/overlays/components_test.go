package overlays

import (
	"maps"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"kubehz.dev/agent/test/kube"
)

// TestComponents_SetThePriorityClassAndDenyIngress renders the managed tier
// with both components; the apiserver accepts the result (the uninstall test
// applies it), and here the render is checked for what each promises.
func TestComponents_SetThePriorityClassAndDenyIngress(t *testing.T) {
	objs := render(t, filepath.Join("testdata", "components"))
	var classes, policies int
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			pc, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "priorityClassName")
			if pc != "kubehz-agent" {
				t.Errorf("Deployment %s priorityClassName %q, want kubehz-agent", o.GetName(), pc)
			}
		case "PriorityClass":
			classes++
			if p, _, _ := unstructured.NestedString(o.Object, "preemptionPolicy"); p != "Never" {
				t.Errorf("PriorityClass preemptionPolicy %q, want Never", p)
			}
		case "NetworkPolicy":
			policies++
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "podSelector", "matchLabels")
			types, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "policyTypes")
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "ingress")
			if sel["app.kubernetes.io/instance"] != "kubehz-agent" || len(sel) != 1 || len(types) != 1 || types[0] != "Ingress" || len(rules) != 0 {
				t.Errorf("NetworkPolicy does not deny all ingress to the agent's pods: %v", o.Object["spec"])
			}
		}
	}
	if classes != 1 || policies != 1 {
		t.Errorf("%d PriorityClasses and %d NetworkPolicies rendered, want 1 and 1", classes, policies)
	}
	// Each pod template carries the instance label the policy selects.
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		l, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		if l["app.kubernetes.io/instance"] != "kubehz-agent" {
			t.Errorf("Deployment %s pods lack app.kubernetes.io/instance", o.GetName())
		}
	}
}

func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kube.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func exists(t *testing.T, dyn dynamic.Interface, gvk schema.GroupVersionKind, ns, name string) bool {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(suite.env.Client.Discovery()))
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dyn.Resource(m.Resource).Namespace(ns).Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestComponents_ControlPlaneToleratesBothTaintsOnBothDeployments renders
// the managed tier with the control-plane component: the observer and the
// actor each tolerate the control-plane taint and the older master one
// (NoSchedule, any value), nothing else changes in their pod specs, and the
// apiserver accepts the result.
func TestComponents_ControlPlaneToleratesBothTaintsOnBothDeployments(t *testing.T) {
	objs := render(t, filepath.Join("testdata", "control-plane"))
	plain := render(t, filepath.Join(suite.env.Root, "deploy", "actor"))
	want := []any{
		map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
		map[string]any{"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
	}
	seen := map[string]bool{}
	for i, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		seen[o.GetName()] = true
		got, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec", "tolerations")
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("Deployment %s tolerations %v, want %v", o.GetName(), got, want)
		}
		// Only the tolerations differ from the plain render.
		spec, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "template", "spec")
		withOut := maps.Clone(spec.(map[string]any))
		delete(withOut, "tolerations")
		base, _, _ := unstructured.NestedFieldNoCopy(plain[i].Object, "spec", "template", "spec")
		if plain[i].GetName() != o.GetName() || !equality.Semantic.DeepEqual(withOut, base) {
			t.Errorf("Deployment %s: the component changed more than the tolerations", o.GetName())
		}
	}
	if !seen["observer"] || !seen["actor"] || len(seen) != 2 {
		t.Errorf("Deployments rendered: %v, want observer and actor", seen)
	}
	if err := suite.env.Apply(ctxT(t), objs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, objs) })
}
