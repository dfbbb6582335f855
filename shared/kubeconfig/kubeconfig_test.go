package kubeconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// Two files, as an operator with a split KUBECONFIG has them: the cluster
// and context in one, the credentials in the other.
const clusterFile = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`

const userFile = `apiVersion: v1
kind: Config
users:
- name: u
  user:
    token: from-second-file
`

func TestLoad_MergesAMultiPathKubeconfigAndSetsTheAgentsClientOptions(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(clusterFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(userFile), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KUBECONFIG": a + string(filepath.ListSeparator) + b}
	cfg, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "from-second-file" {
		t.Fatalf("host %q token %q: want the cluster from the first file and the token from the second", cfg.Host, cfg.BearerToken)
	}
	if cfg.QPS != 20 || cfg.Burst != 30 {
		t.Fatalf("rate limits %v/%d, want 20/30", cfg.QPS, cfg.Burst)
	}
	if !cfg.DisableCompression {
		t.Fatal("responses may come gzipped: the apiserver would spend CPU compressing every large list and watch for us")
	}
}

func TestLoad_NamesAMissingKubeconfig(t *testing.T) {
	env := map[string]string{"KUBECONFIG": filepath.Join(t.TempDir(), "absent")}
	if _, err := Load(func(k string) string { return env[k] }); err == nil {
		t.Fatal("a KUBECONFIG naming no file loaded")
	}
}
