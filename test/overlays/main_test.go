// Package overlays runs the manifests as GitOps users change them (a
// namespace: overlay, a namePrefix: overlay, the optional components) and
// the README's uninstall commands on a real apiserver of its own, so the
// shared e2e suite's kubehz-system is never disturbed.
package overlays

import (
	"fmt"
	"os"
	"testing"

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
	dir, remove, err := kube.TempDir("kubehz-overlays-")
	if err != nil {
		return 0, err
	}
	defer remove()
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
	if suite.observerBin, suite.actorBin, err = kube.BuildAgents(env.Root, dir, false); err != nil {
		return 0, err
	}
	if _, err := env.InstallCRDs(kube.MachineCRDs); err != nil {
		return 0, err
	}
	return kube.RunLeakChecked(m), nil
}
