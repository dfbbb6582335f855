package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WriteUserKubeconfig writes a kubeconfig for user, a member of
// system:masters, authenticated by a client certificate.
func (e *Env) WriteUserKubeconfig(user, path string) error {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("user %s: %w", user, err)
	}
	b, err := u.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// MachineControllerAssets returns the directory with machine-controller and
// its webhook, building them when no cached copy exists yet, and checks
// their stamp: the pinned version, built with this repository's patch.
func MachineControllerAssets(root string) (string, error) {
	dir := os.Getenv(MachineControllerAssetsEnv)
	if dir == "" {
		cmd := exec.Command(filepath.Join(root, "hack", "machinecontroller.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("hack/machinecontroller.sh: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	patch, err := os.ReadFile(filepath.Join(root, "test", "tools", "machine-controller", "simcloud.patch"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(patch)
	want := "machine-controller " + MachineControllerVersion + "+simcloud." + hex.EncodeToString(sum[:])[:12]
	got, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("machine-controller assets: %w", err)
	}
	if strings.TrimSpace(string(got)) != want {
		return "", fmt.Errorf("machine-controller assets in %s are %q, want %q", dir, strings.TrimSpace(string(got)), want)
	}
	return dir, nil
}

// checkKubeControllerManager asks the binary its version: it must be the
// apiserver's own.
func checkKubeControllerManager(bin string) error {
	want, err := WantKubeVersion()
	if err != nil {
		return err
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %w\n%s", bin, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "Kubernetes "+want {
		return fmt.Errorf("kube-controller-manager reports %q, want Kubernetes %s", got, want)
	}
	return nil
}
