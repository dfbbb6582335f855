package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/test/platformsim"
)

// registerPolicy is the ValidatingAdmissionPolicy deploy/register ships; a
// refusal that does not name it is not the refusal this file is about.
const registerPolicy = "ValidatingAdmissionPolicy 'kubehz-register-secrets'"

// policyLoadWait bounds how long the apiserver may take to start enforcing
// a policy it has just stored: it loads policies through an informer, so
// the first requests after the apply may still pass.
const policyLoadWait = 30 * time.Second

// tokenSecret is the request that would mint a long-lived token: Kubernetes
// fills a Secret of this type with a token of the named ServiceAccount.
func tokenSecret(name, serviceAccount string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: serviceAccount}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
}

// identitySecret is shaped like the register command's own write.
func identitySecret(name string, data map[string]string, immutable bool) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeOpaque, Immutable: &immutable,
		Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// TestRegisterServiceAccount_CannotMintAServiceAccountToken: the register
// identity may create Secrets, so unchecked it could create a
// service-account-token Secret for the actor (or the observer) and read
// back the token Kubernetes fills in. The shipped policy refuses that and
// every other shape but the identity Secret, and the registration itself
// still runs.
func TestRegisterServiceAccount_CannotMintAServiceAccountToken(t *testing.T) {
	const ns = "e2e-register-mint"
	kubeconfig := registerNamespace(t, ns)
	cfg, err := suite.env.ServiceAccountConfig(ctxT(t), ns, "kubehz-register")
	if err != nil {
		t.Fatal(err)
	}
	asRegister := kubernetes.NewForConfigOrDie(cfg).CoreV1().Secrets(ns)
	admin := suite.env.Client.CoreV1().Secrets(ns)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

	// Control: the apiserver admits the minting request itself from an
	// identity the policy does not bind, so a refusal below is the policy's.
	if _, err := admin.Create(ctxT(t), tokenSecret("kubehz-agent-bind", "kubehz-actor"), dryRun); err != nil {
		t.Fatalf("the apiserver refuses the token Secret even from an administrator: %v", err)
	}

	// The stored policy is enforced once the apiserver has loaded it.
	var last error
	for deadline := time.Now().Add(policyLoadWait); ; time.Sleep(100 * time.Millisecond) {
		_, last = asRegister.Create(ctxT(t), tokenSecret("kubehz-agent-bind", "kubehz-actor"), dryRun)
		if refusedByPolicy(last) || time.Now().After(deadline) {
			break
		}
	}
	if !refusedByPolicy(last) {
		t.Fatalf("after %s the register ServiceAccount may still create a service-account-token Secret for kubehz-actor (err %v)", policyLoadWait, last)
	}

	two := map[string]string{"agent-token": "khz_agt_x", "claim-code": "khzc_x"}
	for _, tt := range []struct {
		name   string
		secret *corev1.Secret
	}{
		{"actor token as the bind Secret", tokenSecret("kubehz-agent-bind", "kubehz-actor")},
		{"actor token as the identity Secret, before it exists", tokenSecret("kubehz-agent", "kubehz-actor")},
		{"observer token as the identity Secret", tokenSecret("kubehz-agent", "kubehz-observer")},
		{"opaque Secret of another name", identitySecret("kubehz-agent-bind", two, true)},
		{"identity Secret with an extra key", identitySecret("kubehz-agent",
			map[string]string{"agent-token": "khz_agt_x", "claim-code": "khzc_x", "token": "x"}, true)},
		{"identity Secret missing a key", identitySecret("kubehz-agent", map[string]string{"agent-token": "khz_agt_x"}, true)},
		{"mutable identity Secret", identitySecret("kubehz-agent", two, false)},
	} {
		_, err := asRegister.Create(ctxT(t), tt.secret, metav1.CreateOptions{})
		switch {
		case err == nil:
			_ = admin.Delete(ctxT(t), tt.secret.Name, metav1.DeleteOptions{})
			t.Errorf("%s: admitted", tt.name)
		case !refusedByPolicy(err):
			t.Errorf("%s: refused, but not by the policy: %v", tt.name, err)
		}
	}

	// Control: the legitimate write, by the real command, still succeeds.
	sim := startSim(t, platformsim.Options{})
	code, out := runRegister(t, sim, ns, kubeconfig)
	if code != 0 {
		t.Fatalf("observer register under the policy exited %d:\n%s", code, tail(out, 4000))
	}
	s, err := admin.Get(ctxT(t), "kubehz-agent", metav1.GetOptions{})
	if err != nil || s.Type != corev1.SecretTypeOpaque || len(sim.Registrations()) != 1 {
		t.Fatalf("the registration did not store its identity Secret and announce it (err %v)", err)
	}
}

// refusedByPolicy reports whether err is the register policy's refusal.
func refusedByPolicy(err error) bool {
	return err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), registerPolicy)
}
