package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// registerWait bounds one `observer register` run: a few apiserver calls
// and one POST to a loopback simulator.
const registerWait = time.Minute

// registerNamespace applies deploy/register's ServiceAccount, Role and
// RoleBinding, rules unchanged, into a namespace of the test's own, as a
// `namespace:` overlay would: the suite's kubehz-system already holds a
// kubehz-agent Secret for other tests. The cluster-wide admission policy
// and its binding are applied as they are. It returns a kubeconfig of that
// ServiceAccount. Secrets left by an earlier run (-count=2) are removed.
func registerNamespace(t *testing.T, ns string) string {
	t.Helper()
	createNamespace(t, ns)
	objs, err := kube.Render(filepath.Join(suite.env.Root, "deploy", "register"))
	if err != nil {
		t.Fatal(err)
	}
	var rbac []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/component"] != "register" || o.GetKind() == "Job" {
			continue
		}
		if o.GetNamespace() == "" { // the policy and its binding
			rbac = append(rbac, o)
			continue
		}
		o.SetNamespace(ns)
		if o.GetKind() == "RoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = ns
			}
			_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
		}
		rbac = append(rbac, o)
	}
	if len(rbac) != 5 {
		t.Fatalf("deploy/register rendered %d RBAC and admission objects, want ServiceAccount, Role, RoleBinding, "+
			"ValidatingAdmissionPolicy and its binding", len(rbac))
	}
	if err := suite.env.Apply(ctxT(t), rbac); err != nil {
		t.Fatal(err)
	}
	secrets := suite.env.Client.CoreV1().Secrets(ns)
	cleanup := func() {
		for _, name := range []string{"kubehz-agent", "kubehz-agent-bind"} {
			_ = secrets.Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	kubeconfig := filepath.Join(t.TempDir(), "register.kubeconfig")
	if err := suite.env.ServiceAccountKubeconfig(ctxT(t), ns, "kubehz-register", kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// runRegister runs the built observer as `observer register` to the end,
// with no bind secret file.
func runRegister(t *testing.T, sim *platformsim.Server, ns, kubeconfig string) (int, string) {
	t.Helper()
	return runRegisterWithBind(t, sim, ns, kubeconfig, filepath.Join(t.TempDir(), "no-bind-secret"))
}

// runRegisterWithBind reads the bind secret from bindFile, where the Job's
// optional Secret volume would put it (no kubelet runs here).
func runRegisterWithBind(t *testing.T, sim *platformsim.Server, ns, kubeconfig, bindFile string) (int, string) {
	t.Helper()
	p, err := kube.StartProcess(suite.observerBin, []string{
		"CLUSTER_ID=" + clusterID,
		"KUBEHZ_API_URL=" + sim.URL(),
		"KUBEHZ_NAMESPACE=" + ns,
		"KUBEHZ_BIND_SECRET_FILE=" + bindFile,
		"KUBECONFIG=" + kubeconfig,
	}, "register")
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(registerWait)
	if err != nil {
		p.Kill()
		t.Fatalf("observer register: %v\n%s", err, tail(p.Output(), 4000))
	}
	p.Ended()
	return code, p.Output()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func registerRequests(sim *platformsim.Server) []platformsim.Request {
	var out []platformsim.Request
	for _, r := range sim.Requests() {
		if r.Endpoint == platformsim.EndpointRegister {
			out = append(out, r)
		}
	}
	return out
}

// TestRegister_TwiceMakesOneSecretOneIdentityAndTheObserverBeatsWithIt runs
// the registration twice under the register ServiceAccount, then starts an
// observer with the Secret it made.
func TestRegister_TwiceMakesOneSecretOneIdentityAndTheObserverBeatsWithIt(t *testing.T) {
	const ns = "e2e-register"
	kubeconfig := registerNamespace(t, ns)
	sim := startSim(t, platformsim.Options{})

	var outputs []string
	for run := 1; run <= 2; run++ {
		code, out := runRegister(t, sim, ns, kubeconfig)
		if code != 0 {
			t.Fatalf("run %d exited %d:\n%s", run, code, tail(out, 4000))
		}
		outputs = append(outputs, out)
	}

	list, err := suite.env.Client.CoreV1().Secrets(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "kubehz-agent" {
		t.Fatalf("namespace holds %d Secrets, want exactly kubehz-agent", len(list.Items))
	}
	secret := list.Items[0]
	tok, claim := secret.Data["agent-token"], secret.Data["claim-code"]
	if !regexp.MustCompile(`^khz_agt_[0-9a-f]{64}$`).Match(tok) || !bytes.HasPrefix(claim, []byte("khzc_")) {
		t.Fatalf("the Secret does not hold a well-formed token and claim code")
	}
	if secret.Immutable == nil || !*secret.Immutable {
		t.Error("the identity Secret is mutable")
	}

	regs := sim.Registrations()
	if len(regs) != 1 || regs[0].TokenSHA256 != sha256Hex(tok) || regs[0].ClaimCodeSHA256 != sha256Hex(claim) {
		t.Fatalf("simulator holds %+v; want one registration of the Secret's hashes", regs)
	}
	reqs := registerRequests(sim)
	if len(reqs) != 2 || reqs[0].Status != 201 || reqs[1].Status != 200 || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("want the same body announced twice (201, then 200); got %d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Token != "" {
			t.Error("a registration carried a bearer token")
		}
		if bytes.Contains(r.Body, tok) || bytes.Contains(r.Body, claim) {
			t.Error("a registration body carried the token or claim code itself")
		}
	}

	for i, out := range outputs {
		if strings.Contains(out, string(tok)) || strings.Contains(out, string(claim)) {
			t.Errorf("run %d printed the token or the claim code", i+1)
		}
	}
	assertPrintedLineReadsTheClaim(t, outputs[1], ns, secret, claim)

	// The observer, given the Secret as the kubelet would mount it, beats.
	tokenFile := filepath.Join(t.TempDir(), "agent-token")
	writeToken(t, tokenFile, string(tok))
	p, err := kube.StartProcess(suite.observerBin, observerEnv(t, sim, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if code, err := p.Stop(15 * time.Second); err != nil || code != 0 {
			t.Errorf("observer did not stop cleanly (code %d, %v)\n%s", code, err, tail(p.Output(), 4000))
		}
	})
	waitBeat(t, sim, func(b platformsim.Beat) bool { return b.Token == string(tok) })
}

// assertPrintedLineReadsTheClaim evaluates the printed kubectl line's
// jsonpath on the Secret, as kubectl would, and decodes it like base64 -d.
func assertPrintedLineReadsTheClaim(t *testing.T, out, ns string, secret corev1.Secret, claim []byte) {
	t.Helper()
	m := regexp.MustCompile(`kubectl -n (\S+) get secret (\S+) -o jsonpath='([^']+)' \| base64 -d`).FindStringSubmatch(out)
	if m == nil || m[1] != ns || m[2] != "kubehz-agent" {
		t.Fatalf("output lacks the kubectl line for %s/kubehz-agent:\n%s", ns, tail(out, 2000))
	}
	jp := jsonpath.New("claim")
	if err := jp.Parse(m[3]); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(&secret)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	_ = json.Unmarshal(raw, &doc)
	var buf bytes.Buffer
	if err := jp.Execute(&buf, doc); err != nil {
		t.Fatal(err)
	}
	got, err := base64.StdEncoding.DecodeString(buf.String())
	if err != nil || !bytes.Equal(got, claim) {
		t.Errorf("the printed line does not read the claim code")
	}
}

// TestRegister_PresentsTheBindSecretAndSurvivesAWrongOne: with a wrong bind
// secret the platform refuses and nothing is lost; once the right one is
// in place a re-run announces the identity the first run stored. The bind
// secret is a file, as the Job mounts it, and no Secret of that name
// exists: the command never asks the API for it.
func TestRegister_PresentsTheBindSecretAndSurvivesAWrongOne(t *testing.T) {
	const ns = "e2e-register-bind"
	kubeconfig := registerNamespace(t, ns)
	sim := startSim(t, platformsim.Options{BindSecret: "bind-e2e-42"})
	secrets := suite.env.Client.CoreV1().Secrets(ns)
	bindFile := filepath.Join(t.TempDir(), "bind-secret")
	setBind := func(value string) {
		if err := os.WriteFile(bindFile, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	setBind("bind-e2e-41")
	code, out := runRegisterWithBind(t, sim, ns, kubeconfig, bindFile)
	if code != 1 || !strings.Contains(out, ns+"/kubehz-agent-bind") {
		t.Fatalf("wrong bind secret: exit %d, want 1 naming the bind Secret:\n%s", code, tail(out, 3000))
	}
	if len(sim.Registrations()) != 0 {
		t.Fatal("a wrong bind secret registered")
	}
	stored, err := secrets.Get(ctxT(t), "kubehz-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the identity Secret is not stored after a refused announce: %v", err)
	}

	setBind("bind-e2e-42")
	code, again := runRegisterWithBind(t, sim, ns, kubeconfig, bindFile)
	if code != 0 {
		t.Fatalf("right bind secret: exit %d:\n%s", code, tail(again, 3000))
	}
	reqs := registerRequests(sim)
	var body struct{ BindSecret string }
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &body)
	if body.BindSecret != "bind-e2e-42" {
		t.Errorf("the simulator got bind secret %q", body.BindSecret)
	}
	regs := sim.Registrations()
	if len(regs) != 1 || regs[0].TokenSHA256 != sha256Hex(stored.Data["agent-token"]) {
		t.Errorf("the re-run did not announce the identity the first run stored")
	}
	if strings.Contains(out+again, "bind-e2e-4") {
		t.Error("the bind secret was printed")
	}
}

// TestRegisterServiceAccount_CanOnlyGetTheIdentitySecretAndCreate asks the
// apiserver what the register identity may do with Secrets. It cannot read
// the bind Secret: that would let it read back a token Secret it made under
// that name (the admission policy refuses such a Secret; this is the second
// wall).
func TestRegisterServiceAccount_CanOnlyGetTheIdentitySecretAndCreate(t *testing.T) {
	const ns = "e2e-register-rbac"
	registerNamespace(t, ns)
	tests := []struct {
		verb, name string
		want       bool
	}{
		{"get", "kubehz-agent", true},
		{"get", "kubehz-agent-bind", false},
		{"create", "", true},
		{"get", "another-secret", false},
		{"list", "", false},
		{"watch", "", false},
		{"update", "kubehz-agent", false},
		{"patch", "kubehz-agent", false},
		{"delete", "kubehz-agent", false},
		{"deletecollection", "", false},
	}
	for _, tt := range tests {
		ok, err := suite.env.ServiceAccountCan(ctxT(t), ns, "kubehz-register",
			&authorizationv1.ResourceAttributes{Namespace: ns, Verb: tt.verb, Resource: "secrets", Name: tt.name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tt.want {
			t.Errorf("%s secrets %q: allowed %v, want %v", tt.verb, tt.name, ok, tt.want)
		}
	}
	for _, other := range []authorizationv1.ResourceAttributes{
		{Namespace: "kube-system", Verb: "create", Resource: "secrets"},
		{Namespace: ns, Verb: "get", Resource: "configmaps", Name: "kubehz-agent"},
		{Verb: "list", Resource: "nodes"},
	} {
		ok, err := suite.env.ServiceAccountCan(ctxT(t), ns, "kubehz-register", &other, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Errorf("the register identity may %s %s in %q", other.Verb, other.Resource, other.Namespace)
		}
	}
}

// TestRegisterJob_AdmittedUnderRestrictedPodSecurity dry-run creates the
// Job's pod in a namespace enforcing "restricted", as the observer's is.
func TestRegisterJob_AdmittedUnderRestrictedPodSecurity(t *testing.T) {
	objs, err := kube.Render(filepath.Join(suite.env.Root, "deploy", "register"))
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	for _, o := range objs {
		if o.GetKind() == "Job" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &job); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ns = "e2e-pss-restricted-register"
	if _, err := suite.env.Client.CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   ns,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"},
	}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "register-pss", Namespace: ns}, Spec: job.Spec.Template.Spec}
	pod.Spec.ServiceAccountName = ""
	if _, err := suite.env.Client.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("restricted PodSecurity rejects the register pod: %v", err)
	}

	// The same check must be able to fail: a privileged variant is refused.
	bad := pod.DeepCopy()
	bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	if _, err := suite.env.Client.CoreV1().Pods(ns).Create(ctxT(t), bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatal("a pod allowing privilege escalation was admitted; the namespace does not enforce restricted")
	}
}
