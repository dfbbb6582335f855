package platform

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRedirects_AreRefusedAndTheTokenStaysHome(t *testing.T) {
	var stolen atomic.Int32
	elsewhere := newTestServer(t, func(http.ResponseWriter, *http.Request) { stolen.Add(1) })

	tests := []struct {
		name       string
		code       int
		location   string // "" sends no Location; a leading "/" is relative
		wantTarget string // substring of the error; "" checks nothing
	}{
		{name: "301 away", code: 301, location: elsewhere.URL + "/steal?q=querysecret#frag", wantTarget: elsewhere.URL + "/steal"},
		{name: "302 away", code: 302, location: elsewhere.URL + "/steal?q=querysecret", wantTarget: elsewhere.URL + "/steal"},
		{name: "303 away", code: 303, location: elsewhere.URL + "/?q=querysecret", wantTarget: elsewhere.URL + "/"},
		{name: "307 away, body replayable", code: 307, location: elsewhere.URL + "/steal?q=querysecret", wantTarget: elsewhere.URL + "/steal"},
		{name: "308 away, body replayable", code: 308, location: elsewhere.URL + "/steal?q=querysecret", wantTarget: elsewhere.URL + "/steal"},
		{name: "308 with credentials in Location", code: 308, location: "https://user:querysecret@evil.example/x", wantTarget: "https://evil.example/x"},
		{name: "relative 302", code: 302, location: "/moved?q=querysecret", wantTarget: "/moved"},
		{name: "302 without Location", code: 302},
		{name: "302 to a path ending like the token starts", code: 302, location: elsewhere.URL + "/moved/back", wantTarget: elsewhere.URL + "/moved/back)"},
		{name: "302 to a path that echoes the token", code: 302, location: elsewhere.URL + "/moved/" + secret, wantTarget: elsewhere.URL + "/<withheld: it holds the credential>"},
		{name: "302 to a path that echoes the token escaped", code: 302, location: elsewhere.URL + "/moved/%6B" + secret[1:], wantTarget: elsewhere.URL + "/<withheld: it holds the credential>"},
		{name: "302 to a host named after the token", code: 302, location: "https://" + strings.ReplaceAll(secret, "-", "") + ".evil.example/x", wantTarget: "https://khz_agt_***redacted***"},
		{name: "302 to a path past the cap", code: 302, location: elsewhere.URL + "/" + strings.Repeat("a", 300), wantTarget: strings.Repeat("a", 100) + "…)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stolen.Store(0)
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.location != "" {
					w.Header().Set("Location", tt.location)
				}
				w.WriteHeader(tt.code)
			})
			c, creds := newTestClient(t, srv, nil)
			_, postErr := c.PostHeartbeat(t.Context(), []byte(`{"schema":2}`))
			_, getErr := c.GetDesired(t.Context(), `"1-000"`)
			for _, err := range []error{postErr, getErr} {
				var re *RedirectError
				if !errors.As(err, &re) || re.Code != tt.code {
					t.Fatalf("err = %v, want RedirectError %d", err, tt.code)
				}
				var se *StatusError
				if !errors.As(err, &se) || se.Code != tt.code || IsAuth(err) {
					t.Errorf("a redirect must read as a generic status %d: %v", tt.code, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, strconv.Itoa(tt.code)) || !strings.Contains(msg, "redirects are refused") {
					t.Errorf("message does not say what was refused: %q", msg)
				}
				if !strings.Contains(msg, tt.wantTarget) {
					t.Errorf("message %q does not name target %q", msg, tt.wantTarget)
				}
				for _, leak := range []string{secret, strings.TrimPrefix(secret, "khz_agt_"), "s3cr3tvalue", "querysecret", "frag"} {
					if strings.Contains(msg, leak) {
						t.Errorf("message leaks %q: %q", leak, msg)
					}
				}
			}
			if n := stolen.Load(); n != 0 {
				t.Errorf("the redirect target received %d requests", n)
			}
			if creds.invalidations() != 0 {
				t.Error("a redirect invalidated the token")
			}
		})
	}
}
