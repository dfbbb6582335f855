package platform

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return u
}

// newTestServer starts a loopback server that the test closes on cleanup.
func newTestServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// clientArgs are New's arguments, for a test to edit before the client is
// built.
type clientArgs struct {
	base      *url.URL
	clusterID string
	creds     Credentials
	Options
}

func (a clientArgs) new() (*Client, error) { return New(a.base, a.clusterID, a.creds, a.Options) }

// newTestClient points a client at srv; edit tweaks the arguments first.
func newTestClient(t *testing.T, srv *httptest.Server, edit func(*clientArgs)) (*Client, *fakeCredentials) {
	t.Helper()
	creds := &fakeCredentials{tok: secret}
	args := clientArgs{base: mustParse(t, srv.URL), clusterID: "demo.example.com", creds: creds,
		Options: Options{UserAgent: "kubehz-agent/1.2.3"}}
	if edit != nil {
		edit(&args)
	}
	c, err := args.new()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Registered after srv.Close, so it runs first: pooled connections
	// would otherwise outlive the test and trip goleak.
	t.Cleanup(c.CloseIdleConnections)
	return c, creds
}

// assertNoSecret fails if err's text carries the token.
func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the token: %v", err)
	}
}

// secret is the test token; no error string may ever contain it.
const secret = "khz_agt_s3cr3t-value"
