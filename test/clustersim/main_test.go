package clustersim

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
)

// env is the one control plane every test here shares, with
// machine-controller's CRDs installed.
var env *kube.Env

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clustersim setup:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	var err error
	env, err = kube.Start(kube.Options{})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}()
	if _, err := env.InstallCRDs(kube.MachineCRDs); err != nil {
		return 0, err
	}
	// One request through the shared client transport, so its connection
	// exists before the baseline and is not mistaken for a leak.
	if _, err := env.Client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		return 0, err
	}
	baseline := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(baseline); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code, nil
}

// startWorld starts the real controllers and a simulator on a fresh cloud,
// and stops both when the test ends.
func startWorld(t *testing.T) *World {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := StartWorld(ctx, env, t.TempDir(), Options{JoinDelay: 300 * time.Millisecond}, kube.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(w.Controllers.Output())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Close(ctx, env); err != nil {
			t.Error(err)
		}
	})
	return w
}
