package release

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kubehz.dev/agent/test/kube"
)

// registerObjects renders deploy/register and keeps what it adds to the
// observer it includes.
func registerObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kube.Render(filepath.Join(root(t), "deploy", "register"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/component"] == "register" {
			out = append(out, o)
		}
	}
	return out
}

// TestRegisterRBAC_OnlyGetsTheIdentitySecretByNameAndCreates pins the
// register ServiceAccount's whole reach: get on the identity Secret by name
// (the bind Secret is mounted, never read through the API), and create on
// Secrets, in kubehz-system; no ClusterRole at all.
func TestRegisterRBAC_OnlyGetsTheIdentitySecretByNameAndCreates(t *testing.T) {
	var roles int
	for _, o := range registerObjects(t) {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding":
			t.Errorf("%s %s: register needs no cluster-wide permission", o.GetKind(), o.GetName())
		case "Role":
			roles++
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			want := []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"kubehz-agent"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			}
			if role.Namespace != "kubehz-system" || !reflect.DeepEqual(role.Rules, want) {
				t.Errorf("Role %s/%s rules %+v, want %+v", role.Namespace, role.Name, role.Rules, want)
			}
		}
	}
	if roles != 1 {
		t.Errorf("%d register Roles, want 1", roles)
	}
}

// TestRegisterJob_RestrictedOneShotWithTheAgreedLabels checks the Job the
// way the Deployments are checked, plus what makes it a bounded one-shot.
func TestRegisterJob_RestrictedOneShotWithTheAgreedLabels(t *testing.T) {
	wantLabels := map[string]string{
		"app.kubernetes.io/name":       "kubehz-register",
		"app.kubernetes.io/component":  "register",
		"app.kubernetes.io/instance":   "kubehz-agent",
		"app.kubernetes.io/part-of":    "kubehz",
		"app.kubernetes.io/managed-by": "kustomize",
		"app.kubernetes.io/version":    "dev",
	}
	var job *batchv1.Job
	objs := registerObjects(t)
	for _, o := range objs {
		if !reflect.DeepEqual(o.GetLabels(), wantLabels) {
			t.Errorf("%s %s labels %v", o.GetKind(), o.GetName(), o.GetLabels())
		}
		if o.GetKind() == "Job" {
			job = &batchv1.Job{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, job); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(objs) != 6 || job == nil {
		t.Fatalf("want ServiceAccount, Role, RoleBinding, the admission policy and its binding, and Job; got %d objects", len(objs))
	}
	if job.Namespace != "kubehz-system" || job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit > 5 ||
		job.Spec.TTLSecondsAfterFinished == nil || job.Spec.ActiveDeadlineSeconds == nil {
		t.Errorf("Job must live in kubehz-system with a small backoffLimit, a TTL and a deadline")
	}
	pod := job.Spec.Template.Spec
	if !reflect.DeepEqual(job.Spec.Template.Labels, wantLabels) {
		t.Errorf("pod template labels %v", job.Spec.Template.Labels)
	}
	if pod.ServiceAccountName != "kubehz-register" || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("pod must run as kubehz-register with its token mounted")
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("restartPolicy %q, nodeSelector %v", pod.RestartPolicy, pod.NodeSelector)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext is not restricted")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "ghcr.io/kubehz/observer:main" || !reflect.DeepEqual(c.Args, []string{"register"}) {
		t.Errorf("image %q args %v", c.Image, c.Args)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext is not restricted")
	}
	if len(c.Ports) > 0 {
		t.Errorf("the register Job opens ports")
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || !strings.HasPrefix(c.EnvFrom[0].ConfigMapRef.Name, "kubehz-config-") {
		t.Errorf("envFrom %+v: want the observer's generated (hash-suffixed) kubehz-config", c.EnvFrom)
	}
}

// TestRegisterJob_MountsTheBindSecretWhereTheCommandReadsIt: the command
// reads the bind secret from KUBEHZ_BIND_SECRET_FILE, whose default is
// /var/run/secrets/kubehz/bind/bind-secret, and never through the API; the
// Job must put exactly that key there, from an optional volume (no Secret,
// no bind secret), read-only.
func TestRegisterJob_MountsTheBindSecretWhereTheCommandReadsIt(t *testing.T) {
	var job batchv1.Job
	for _, o := range registerObjects(t) {
		if o.GetKind() == "Job" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &job); err != nil {
				t.Fatal(err)
			}
		}
	}
	pod := job.Spec.Template.Spec
	if len(pod.Volumes) != 1 || len(pod.Containers) != 1 || len(pod.Containers[0].VolumeMounts) != 1 {
		t.Fatalf("want one volume mounted once; got %d volumes, %+v", len(pod.Volumes), pod.Containers)
	}
	v, m := pod.Volumes[0], pod.Containers[0].VolumeMounts[0]
	if v.Secret == nil || v.Secret.SecretName != "kubehz-agent-bind" || v.Secret.Optional == nil || !*v.Secret.Optional ||
		!reflect.DeepEqual(v.Secret.Items, []corev1.KeyToPath{{Key: "bind-secret", Path: "bind-secret"}}) {
		t.Errorf("volume %+v: want the optional Secret kubehz-agent-bind, key bind-secret only", v)
	}
	if m.Name != v.Name || !m.ReadOnly || m.MountPath+"/"+v.Secret.Items[0].Path != "/var/run/secrets/kubehz/bind/bind-secret" {
		t.Errorf("mount %+v: want it read-only at /var/run/secrets/kubehz/bind", m)
	}
	for _, e := range pod.Containers[0].Env {
		if e.Name == "KUBEHZ_BIND_SECRET_FILE" {
			t.Errorf("the Job sets KUBEHZ_BIND_SECRET_FILE=%q; the mount follows the default", e.Value)
		}
	}
}
