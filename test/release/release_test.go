// Package release checks, without Docker, what the images and manifests
// promise: static binaries for both architectures, a pinned non-root
// distroless image, a Deployment that meets Pod Security "restricted" and
// opens no port, and release manifests pinned by digest.
package release

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kubehz.dev/agent/test/kube"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := kube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestManifests_RestrictedAndLabelled(t *testing.T) {
	for _, tc := range []struct{ dir, deployment, sa string }{
		{"observer", "observer", "kubehz-observer"},
		{"actor", "actor", "kubehz-actor"},
	} {
		t.Run(tc.dir, func(t *testing.T) { checkManifests(t, tc.dir, tc.deployment, tc.sa) })
	}
}

func checkManifests(t *testing.T, dir, name, sa string) {
	objs, deploy := renderDeployment(t, dir, name)
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/part-of"] != "kubehz" {
			t.Errorf("%s %s lacks app.kubernetes.io/part-of: kubehz", o.GetKind(), o.GetName())
		}
	}
	switch name {
	case "observer":
		if deploy.Namespace != "kubehz-system" || *deploy.Spec.Replicas != 1 || deploy.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("want kubehz-system/observer, 1 replica, Recreate; got %s/%s", deploy.Namespace, deploy.Name)
		}
	case "actor":
		if deploy.Namespace != "kubehz-system" || *deploy.Spec.Replicas != 2 {
			t.Errorf("want kubehz-system/actor with 2 replicas (a leader and a standby)")
		}
	}
	pod := deploy.Spec.Template.Spec
	if pod.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("no kubernetes.io/os: linux nodeSelector; the images are Linux only")
	}
	if name == "actor" {
		spread := pod.TopologySpreadConstraints
		if len(spread) != 1 || spread[0].TopologyKey != "kubernetes.io/hostname" || spread[0].WhenUnsatisfiable != "ScheduleAnyway" {
			t.Errorf("actor replicas are not spread across nodes: %+v", spread)
		}
		pdb := false
		for _, o := range objs {
			max, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "maxUnavailable")
			pdb = pdb || (o.GetKind() == "PodDisruptionBudget" && max == 1)
		}
		if !pdb {
			t.Errorf("no PodDisruptionBudget with maxUnavailable 1 for the actor")
		}
	}
	// The namespace comes from the downward API, so a namespace: overlay
	// reaches the binary.
	ns := false
	for _, e := range pod.Containers[0].Env {
		ns = ns || (e.Name == "KUBEHZ_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace")
	}
	if !ns {
		t.Errorf("KUBEHZ_NAMESPACE is not the pod's metadata.namespace")
	}
	if pod.ServiceAccountName != sa {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext is not restricted")
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if len(c.Ports) > 0 {
			t.Errorf("container %s opens ports", c.Name)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s securityContext is not restricted", c.Name)
		}
		if _, ok := c.Resources.Limits["memory"]; !ok {
			t.Errorf("container %s has no memory limit for the Go soft limit to follow", c.Name)
		}
		for _, m := range c.VolumeMounts {
			if m.SubPath != "" {
				t.Errorf("mount %s uses subPath, which hides Secret rotation", m.Name)
			}
		}
	}
}

// renderDeployment renders deploy/<dir> and returns its objects and the
// Deployment called name.
func renderDeployment(t *testing.T, dir, name string) ([]*unstructured.Unstructured, *appsv1.Deployment) {
	t.Helper()
	objs, err := kube.Render(filepath.Join(root(t), "deploy", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == name {
			deploy := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, deploy); err != nil {
				t.Fatal(err)
			}
			return objs, deploy
		}
	}
	t.Fatalf("deploy/%s renders no Deployment %s", dir, name)
	return nil, nil
}
