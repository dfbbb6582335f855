package platform

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestConnections_ReusedAfterBodiesWithinTheDrain(t *testing.T) {
	tests := []struct {
		name string
		code int
		body string
	}{
		{name: "small 2xx", code: 200, body: `{"availableUpdates":[]}`},
		{name: "2xx just over the verdict cap", code: 200, body: strings.Repeat(" ", 128<<10+32<<10)},
		{name: "error answer", code: 500, body: strings.Repeat("e", 32<<10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.code)
				_, _ = io.WriteString(w, tt.body)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			c, _ := newTestClient(t, srv, nil)
			for range 3 {
				_, _ = c.PostHeartbeat(t.Context(), nil)
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("three beats opened %d connections, want 1", n)
			}
		})
	}
}

func TestDebugSnippet_IsShortCleanAndRedacted(t *testing.T) {
	c, logs := debugClient(t, "bad beat\n"+secret+"\x1b[31m"+strings.Repeat("z", 2000))
	_, err := c.PostHeartbeat(t.Context(), nil)
	assertNoSecret(t, err)
	var line struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", logs.String(), err)
	}
	if line.Status != 400 || !strings.HasPrefix(line.Body, "bad beat <redacted>") {
		t.Errorf("log line = %+v", line)
	}
	if len(line.Body) > snippetBytes || strings.ContainsAny(line.Body, "\n\x1b") {
		t.Errorf("snippet not bounded or not cleaned: %q", line.Body)
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("log leaks the token")
	}
}

// The read budget can cut an echoed token short, and making the text valid
// UTF-8 shortens what came before it, moving the cut token into the logged
// part: it is masked all the same.
func TestDebugSnippet_MasksATokenCutByTheReadBudget(t *testing.T) {
	c, logs := debugClient(t, strings.Repeat("\xff", 4<<10-12)+secret)
	_, err := c.PostHeartbeat(t.Context(), nil)
	assertNoSecret(t, err)
	if !strings.Contains(logs.String(), `"body":"?`) {
		t.Fatalf("log %q lacks the snippet; the stimulus did not reach it", logs.String())
	}
	if strings.Contains(logs.String(), secret[:12]) {
		t.Errorf("log leaks the start of the token: %s", logs.String())
	}
}

// A token pasted into the base URL stays out of a transport error, which
// quotes the request's URL.
func TestTransportError_MasksATokenInTheURL(t *testing.T) {
	srv := newTestServer(t, func(http.ResponseWriter, *http.Request) {})
	c, _ := newTestClient(t, srv, func(o *clientArgs) { o.base = mustParse(t, srv.URL+"/"+secret) })
	srv.Close() // the post now fails in the transport
	_, err := c.PostHeartbeat(t.Context(), nil)
	if err == nil || !strings.Contains(err.Error(), "khz_agt_***redacted***") {
		t.Fatalf("error %v, want a transport error quoting the masked URL", err)
	}
	assertNoSecret(t, err)
}

// debugClient is a client logging at debug level to the buffer it returns,
// posting to a server that answers every request 400 with body.
func debugClient(t *testing.T, body string) (*Client, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, body)
	})
	c, _ := newTestClient(t, srv, func(o *clientArgs) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return c, &logs
}
