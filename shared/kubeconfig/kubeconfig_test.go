package kubeconfig

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
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
	if cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != 20 {
		t.Fatalf("rate limiter %v, want one of 20 QPS that every client shares", cfg.RateLimiter)
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

// Load's one bucket holds for the whole process only because every client is
// built from a copy of its config and a copy shares the limiter: 30 requests
// through clients built from two copies all wait on Load's own limiter.
// Counting the waits, rather than reading the bucket's tokens afterwards,
// keeps the check free of the wall clock: the request path waits on real
// time, so a slow run refills the bucket while it runs.
func TestLoad_ClientsBuiltFromCopiesOfTheConfigShareOneBucket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + srv.URL +
		"\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\nusers:\n- name: u\n  user:\n    token: t\n"
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(func(k string) string { return map[string]string{"KUBECONFIG": kubeconfig}[k] })
	if err != nil {
		t.Fatal(err)
	}
	shared := &countingLimiter{RateLimiter: cfg.RateLimiter}
	cfg.RateLimiter = shared
	for i := range 2 {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath = &schema.GroupVersion{Version: "v1"}, "/api"
		c.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
		client, err := rest.RESTClientFor(c)
		if err != nil {
			t.Fatal(err)
		}
		for range 15 {
			if err := client.Get().AbsPath("/version").Do(t.Context()).Error(); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
		}
	}
	if n := shared.waits.Load(); n != 30 {
		t.Errorf("Load's limiter saw %d of the 30 requests made through two copies of its config: they did not share it", n)
	}
}

// countingLimiter counts the waits a client's request path makes on it.
type countingLimiter struct {
	flowcontrol.RateLimiter
	waits atomic.Int32
}

func (c *countingLimiter) Wait(ctx context.Context) error {
	c.waits.Add(1)
	return c.RateLimiter.Wait(ctx)
}

// In a pod the ServiceAccount is used, unless KUBECONFIG is set: then the
// file wins even there. The control, without KUBECONFIG, shows the pod's
// environment is live: Load goes for the in-cluster config, whose token
// file this machine does not have.
func TestLoad_KubeconfigWinsOverTheServiceAccountInAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	_, err := Load(func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "serviceaccount") {
		t.Fatalf("control: without KUBECONFIG Load = %v, want it to go for the ServiceAccount's token", err)
	}

	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(clusterFile+"users:\n- name: u\n  user:\n    token: t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KUBECONFIG": path}
	cfg, err := Load(func(k string) string { return env[k] })
	if err != nil || cfg.Host != "https://127.0.0.1:6443" {
		t.Fatalf("Load = %v, %v; want the kubeconfig's cluster, not the ServiceAccount's", cfg, err)
	}
}
