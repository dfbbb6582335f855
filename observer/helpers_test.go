package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// goodToken is well formed; badToken has the right length but uppercase hex,
// so it is rejected. Neither may ever be printed.
var (
	goodToken = "khz_agt_" + strings.Repeat("0123456789abcdef", 4)
	badToken  = "khz_agt_" + strings.Repeat("0123456789ABCDEF", 4)
	// pastedHex is goodToken's secret part: printed without its prefix, it
	// has still leaked.
	pastedHex = strings.TrimPrefix(goodToken, "khz_agt_")
)

// testEnv is a valid configuration pointing at p and at a kubeconfig that
// does not exist, with overrides applied; an empty override unsets.
func testEnv(t *testing.T, p *fakePlatform, overrides map[string]string) func(string) string {
	t.Helper()
	env := map[string]string{
		"CLUSTER_ID":         "test-cluster",
		"KUBEHZ_API_URL":     p.srv.URL,
		"KUBEHZ_AGENT_TOKEN": goodToken,
		"KUBECONFIG":         filepath.Join(t.TempDir(), "no-such-kubeconfig"),
	}
	for k, v := range overrides {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// runBriefly calls run with a deadline so a test that goes wrong fails
// instead of hanging.
func runBriefly(t *testing.T, getenv func(string) string, stderr *bytes.Buffer) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return run(ctx, []string{"observer"}, getenv, &bytes.Buffer{}, stderr)
}

func assertNoToken(t *testing.T, where, text string) {
	t.Helper()
	for _, secret := range []string{goodToken, badToken, goodToken[8:], badToken[8:]} {
		if strings.Contains(text, secret) {
			t.Errorf("%s leaks a token: %s", where, text)
		}
	}
}

// countingKubeconfig writes a kubeconfig for an apiserver address that
// counts, and closes, every connection made to it.
func countingKubeconfig(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
	})
	return writeKubeconfig(t, l.Addr().String()), &dials
}

// unreachableKubeconfig writes a kubeconfig for an apiserver on a port that
// nothing listens on.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return writeKubeconfig(t, addr)
}

// writeKubeconfig writes a kubeconfig naming an apiserver at addr.
func writeKubeconfig(t *testing.T, addr string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster:
    server: http://%s
users:
- name: nobody
  user: {}
contexts:
- name: gone
  context: {cluster: gone, user: nobody}
current-context: gone
`, addr)
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
