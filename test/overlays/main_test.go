// Package overlays runs the manifests as GitOps users change them (a
// namespace: overlay, a namePrefix: overlay, the optional components) and
// the README's uninstall commands on a real apiserver of its own, so the
// shared e2e suite's kubehz-system is never disturbed.
package overlays

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"kubehz.dev/agent/test/kube"
)

var suite struct {
	env         *kube.Env
	observerBin string
	actorBin    string
	dir         string
}

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "overlays setup:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "kubehz-overlays-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	suite.dir = dir
	env, err := kube.Start(kube.Options{})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}()
	suite.env = env
	suite.observerBin = filepath.Join(dir, "observer")
	if err := kube.Build(env.Root, "./observer", suite.observerBin, false); err != nil {
		return 0, err
	}
	suite.actorBin = filepath.Join(dir, "actor")
	if err := kube.Build(env.Root, "./actor", suite.actorBin, false); err != nil {
		return 0, err
	}
	if _, err := env.InstallCRDs(kube.MachineCRDs()...); err != nil {
		return 0, err
	}
	baseline := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		// The harness's own client connections idle until the control plane
		// stops; the agent runs in separate processes.
		if err := goleak.Find(baseline, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code, nil
}
