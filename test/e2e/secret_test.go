package e2e

import (
	"context"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestObserver_ReadsTheTokenSecretWhenNothingIsMounted runs the observer
// with no token in its environment and no file: it must fall back to the
// kubehz-agent Secret, through the one by-name get that its Role grants.
func TestObserver_ReadsTheTokenSecretWhenNothingIsMounted(t *testing.T) {
	secrets := suite.env.Client.CoreV1().Secrets("kubehz-system")
	if _, err := secrets.Create(ctxT(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubehz-agent"},
		Data:       map[string][]byte{"agent-token": []byte(platformsim.DefaultToken + "\n"), "claim-code": []byte("khzc_never_read")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), "kubehz-agent", metav1.DeleteOptions{}) })

	sim := startSim(t, platformsim.Options{})
	env := observerEnv(t, sim, filepath.Join(t.TempDir(), "no-such-file"))
	p, err := kube.StartProcess(suite.observerBin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if code, err := p.Stop(15e9); err != nil || code != 0 {
			t.Errorf("observer did not stop cleanly (code %d, %v)\n%s", code, err, tail(p.Output(), 4000))
		}
	})
	b := waitBeat(t, sim, nil)
	if b.Token != platformsim.DefaultToken {
		t.Errorf("beat carried another token")
	}
}
