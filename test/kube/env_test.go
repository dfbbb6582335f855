package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStart_ReportsPinnedVersion(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	v, err := env.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Fatalf("apiserver reports %q, want v1.37.2 (ldflags stamp)", v.GitVersion)
	}
	etcd, err := env.EtcdVersion()
	if err != nil {
		t.Fatal(err)
	}
	if etcd != "3.7.3" {
		t.Fatalf("etcd reports %q, want 3.7.3", etcd)
	}
}

// The override variables envtest honours must not swap the pinned binaries:
// pointed at a directory without them, Start still runs the pinned build.
func TestStart_IgnoresEnvtestAssetOverrides(t *testing.T) {
	bogus := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", bogus)
	t.Setenv("TEST_ASSET_KUBE_APISERVER", bogus+"/kube-apiserver")
	t.Setenv("TEST_ASSET_ETCD", bogus+"/etcd")
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	env, err := Start(Options{})
	if err != nil {
		t.Fatalf("Start with envtest overrides set: %v", err)
	}
	if err := env.Stop(); err != nil {
		t.Error(err)
	}
}

// The Go harness, the build script and the script that runs the
// compatibility suite name the same versions.
func TestPinnedVersions_MatchTheBuildScript(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "controlplane.sh"))
	if err != nil {
		t.Fatal(err)
	}
	e2e, err := os.ReadFile(filepath.Join(root, "hack", "e2e.sh"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"\nKUBE_VERSION=" + KubeVersion + "\n", "\nETCD_VERSION=v" + EtcdVersion + "\n"}
	for v := range compatible {
		want = append(want, "  KUBE_VERSION="+v+"\n")
		if !strings.Contains(string(e2e), KubeVersionEnv+"="+v+" ") {
			t.Errorf("hack/e2e.sh does not run the compatibility suite with %s=%s", KubeVersionEnv, v)
		}
	}
	for _, w := range want {
		if !strings.Contains(string(script), w) {
			t.Errorf("hack/controlplane.sh lacks %q", strings.TrimSpace(w))
		}
	}
}

// The harness checks the stamp the build script writes; both name the
// same machine-controller.
func TestMachineControllerVersion_MatchesTheBuildScript(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "machinecontroller.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nMC_VERSION=" + MachineControllerVersion + "\n"; !strings.Contains(string(script), want) {
		t.Errorf("hack/machinecontroller.sh lacks %q", strings.TrimSpace(want))
	}
}

// The controllers' build is what the harness starts: machine-controller
// v1.65.0 with this repository's patch, and a kube-controller-manager of
// the apiserver's own version.
func TestControllerAssets_ReportThePinnedVersions(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := MachineControllerAssets(root)
	if err != nil {
		t.Fatal(err)
	}
	stamp, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(stamp), "machine-controller v1.65.0+simcloud.") {
		t.Errorf("machine-controller stamp %q, want v1.65.0 with the simcloud patch", stamp)
	}
	assets, err := Assets(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkKubeControllerManager(filepath.Join(assets, "kube-controller-manager")); err != nil {
		t.Error(err)
	}
}

// An override directory holding another build is refused, not started.
func TestMachineControllerAssets_RefuseAnotherStamp(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("machine-controller v1.64.0+simcloud.000000000000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(MachineControllerAssetsEnv, dir)
	if _, err := MachineControllerAssets(root); err == nil || !strings.Contains(err.Error(), "v1.64.0") {
		t.Fatalf("assets stamped v1.64.0 gave %v, want a refusal naming the stamp", err)
	}
}
