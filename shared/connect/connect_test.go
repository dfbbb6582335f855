package connect

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"kubehz.dev/agent/shared/config"
)

// The actor refuses an ended term's requests in Wrap; its /desired polls
// are the term's work as much as its apiserver reads, so Wrap must sit in
// the platform client's transport too.
func TestOpen_WrapsThePlatformTransportToo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// Never contacted: building the clients reads no more than this file.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	apiURL, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	common := config.Common{ClusterID: "c-1", APIURL: apiURL,
		AgentToken: "khz_agt_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}
	var wrapped atomic.Int32
	wrap := func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			wrapped.Add(1)
			return next.RoundTrip(r)
		})
	}
	getenv := func(k string) string {
		if k == "KUBECONFIG" {
			return kubeconfig
		}
		return ""
	}
	c, err := Open(t.Context(), common, getenv, Options{Wrap: wrap})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Platform.GetDesired(t.Context(), `"e1"`); err != nil {
		t.Fatal(err)
	}
	if wrapped.Load() != 1 {
		t.Errorf("the platform's request passed Wrap %d times, want 1", wrapped.Load())
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
