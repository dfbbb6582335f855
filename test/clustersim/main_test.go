package clustersim

import (
	"context"
	"fmt"
	"os"
	"testing"

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
	disarm := kube.StopBeforeTimeout()
	code := m.Run()
	disarm()
	if code == 0 {
		if err := goleak.Find(baseline); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code, nil
}
