package platform

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNew_RefusesUnsafeOptions(t *testing.T) {
	creds := &fakeCredentials{tok: secret}
	tests := []struct {
		name    string
		base    string
		id      string
		creds   Credentials
		wantErr string // "" means New must succeed
	}{
		{name: "https anywhere", base: "https://api.kubehz.dev", id: "c1", creds: creds},
		{name: "http to 127.0.0.1", base: "http://127.0.0.1:8080", id: "c1", creds: creds},
		{name: "http to localhost", base: "http://LocalHost:8080/prefix", id: "c1", creds: creds},
		{name: "http to ::1", base: "http://[::1]:8080", id: "c1", creds: creds},
		{name: "http to a public host", base: "http://api.kubehz.dev", id: "c1", creds: creds, wantErr: "non-loopback"},
		{name: "http to a private address", base: "http://10.0.0.1", id: "c1", creds: creds, wantErr: "non-loopback"},
		{name: "http to localhost lookalike", base: "http://localhost.evil.example", id: "c1", creds: creds, wantErr: "non-loopback"},
		{name: "other scheme", base: "ftp://api.kubehz.dev", id: "c1", creds: creds, wantErr: "scheme"},
		{name: "no host", base: "https:///api", id: "c1", creds: creds, wantErr: "no host"},
		{name: "credentials in URL", base: "https://u:pw@api.kubehz.dev", id: "c1", creds: creds, wantErr: "credentials"},
		{name: "query in URL", base: "https://api.kubehz.dev/?x=1", id: "c1", creds: creds, wantErr: "query"},
		{name: "empty cluster id", base: "https://api.kubehz.dev", id: "", creds: creds, wantErr: "cluster id"},
		{name: "dot-dot cluster id", base: "https://api.kubehz.dev", id: "..", creds: creds, wantErr: "cluster id"},
		{name: "no credentials", base: "https://api.kubehz.dev", id: "c1", wantErr: "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(mustParse(t, tt.base), tt.id, tt.creds, Options{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				c.CloseIdleConnections()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error echoes the URL password: %v", err)
			}
		})
	}
	if _, err := New(nil, "c1", creds, Options{}); err == nil {
		t.Error("New accepted a nil base URL")
	}
}

func TestEndpoints_KeepPrefixTrimSlashesAndEscapeID(t *testing.T) {
	tests := []struct {
		name     string
		prefix   string
		id       string
		wantPath string // without the trailing /heartbeat or /desired
	}{
		{name: "bare base", prefix: "", id: "c1", wantPath: "/api/clusters/c1"},
		{name: "trailing slash trimmed", prefix: "/", id: "c1", wantPath: "/api/clusters/c1"},
		{name: "several trailing slashes trimmed", prefix: "///", id: "c1", wantPath: "/api/clusters/c1"},
		{name: "path prefix kept", prefix: "/kubehz/v1/", id: "c1", wantPath: "/kubehz/v1/api/clusters/c1"},
		{name: "escaped prefix survives", prefix: "/a%20b", id: "c1", wantPath: "/a%20b/api/clusters/c1"},
		{name: "id as one segment", prefix: "", id: "a/b?c#d e", wantPath: "/api/clusters/a%2Fb%3Fc%23d%20e"},
		{name: "domain id untouched", prefix: "/p", id: "demo.example.com", wantPath: "/p/api/clusters/demo.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				seen = append(seen, r.Method+" "+r.RequestURI)
			})
			c, _ := newTestClient(t, srv, func(o *clientArgs) {
				o.base = mustParse(t, srv.URL+tt.prefix)
				o.clusterID = tt.id
			})
			if _, err := c.PostHeartbeat(t.Context(), []byte(`{}`)); err != nil {
				t.Fatalf("PostHeartbeat: %v", err)
			}
			if _, err := c.GetDesired(t.Context(), ""); err != nil {
				t.Fatalf("GetDesired: %v", err)
			}
			want := []string{"POST " + tt.wantPath + "/heartbeat", "GET " + tt.wantPath + "/desired"}
			if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
				t.Fatalf("server saw %q, want %q", seen, want)
			}
		})
	}
}

func TestTransport_HasTLSFloorAndBoundsAndHonoursProxy(t *testing.T) {
	c, err := New(mustParse(t, "https://api.kubehz.dev"), "c1", &fakeCredentials{tok: secret},
		Options{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS10}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tr, ok := c.http.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", c.http.Transport)
	}
	if got := tr.TLSClientConfig.MinVersion; got != tls.VersionTLS12 {
		t.Errorf("MinVersion = %#x, want TLS 1.2 even when the caller asked lower", got)
	}
	if tr.Proxy == nil {
		t.Error("proxy from environment not honoured")
	}
	if tr.MaxIdleConnsPerHost == 0 || tr.MaxResponseHeaderBytes == 0 {
		t.Errorf("idle/header bounds unset: %d, %d", tr.MaxIdleConnsPerHost, tr.MaxResponseHeaderBytes)
	}
	// 15 s is the README's request limit (Delivery), written as a number.
	if c.http.Timeout != 15*time.Second || c.http.CheckRedirect == nil {
		t.Errorf("timeout %s, CheckRedirect set %t", c.http.Timeout, c.http.CheckRedirect != nil)
	}
}

func TestTLS_RefusesServerBelowTLS12(t *testing.T) {
	tests := []struct {
		name      string
		serverMax uint16
		wantOK    bool
	}{
		{name: "TLS 1.1 only server refused", serverMax: tls.VersionTLS11},
		{name: "TLS 1.2 server accepted", serverMax: tls.VersionTLS12, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
			srv.TLS = &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tt.serverMax}
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected noise
			srv.StartTLS()
			t.Cleanup(srv.Close)
			pool := x509.NewCertPool()
			pool.AddCert(srv.Certificate())

			if !tt.wantOK {
				// Control: the server really speaks TLS 1.1 to a lax client,
				// so the refusal below is the agent's floor at work.
				lax := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10}}}
				resp, err := lax.Get(srv.URL)
				if err != nil {
					t.Fatalf("control client: %v", err)
				}
				_ = resp.Body.Close()
				lax.CloseIdleConnections()
				hits.Store(0)
			}

			c, _ := newTestClient(t, srv, func(o *clientArgs) {
				o.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10}
			})
			_, err := c.PostHeartbeat(t.Context(), []byte(`{}`))
			assertNoSecret(t, err)
			if tt.wantOK {
				if err != nil || hits.Load() != 1 {
					t.Fatalf("PostHeartbeat: %v, %d requests", err, hits.Load())
				}
				return
			}
			var se *StatusError
			if err == nil || errors.As(err, &se) || hits.Load() != 0 {
				t.Fatalf("PostHeartbeat = %v with %d requests; want a handshake failure", err, hits.Load())
			}
		})
	}
}
