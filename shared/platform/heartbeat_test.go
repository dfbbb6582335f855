package platform

import (
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/wire"
)

func TestPostHeartbeat_SendsBodyAndHeaders(t *testing.T) {
	var got http.Header
	var gotBody string
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
	})
	c, _ := newTestClient(t, srv, nil)
	if _, err := c.PostHeartbeat(t.Context(), []byte(`{"schema":2}`)); err != nil {
		t.Fatalf("PostHeartbeat: %v", err)
	}
	want := map[string]string{
		"Authorization": "Bearer " + secret,
		"Content-Type":  "application/json",
		"Accept":        "application/json",
		"User-Agent":    "kubehz-agent/1.2.3",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
	if gotBody != `{"schema":2}` {
		t.Errorf("body = %q", gotBody)
	}
}

func TestPostHeartbeat_StatusesBecomeErrors(t *testing.T) {
	tests := []struct {
		name            string
		code            int
		wantAuth        bool
		wantInvalidated int
	}{
		{name: "401 is auth and re-reads the token", code: 401, wantAuth: true, wantInvalidated: 1},
		{name: "403 is auth but the token stands", code: 403, wantAuth: true},
		{name: "400 is generic", code: 400},
		{name: "404 is generic", code: 404},
		{name: "500 is generic", code: 500},
		{name: "304 is generic on a POST", code: 304},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.code)
				_, _ = io.WriteString(w, `{"error":"nope"}`)
			})
			c, creds := newTestClient(t, srv, nil)
			v, err := c.PostHeartbeat(t.Context(), []byte(`{}`))
			var se *StatusError
			if !errors.As(err, &se) || se.Code != tt.code {
				t.Fatalf("err = %v, want StatusError %d", err, tt.code)
			}
			var re *RedirectError
			if errors.As(err, &re) {
				t.Errorf("%d reported as a redirect: %v", tt.code, err)
			}
			if IsAuth(err) != tt.wantAuth {
				t.Errorf("IsAuth = %t, want %t", IsAuth(err), tt.wantAuth)
			}
			if n := creds.invalidations(); n != tt.wantInvalidated {
				t.Errorf("Invalidate called %d times, want %d", n, tt.wantInvalidated)
			}
			if v.Present {
				t.Errorf("verdict from an error: %+v", v)
			}
			assertNoSecret(t, err)
		})
	}
}

func TestPostHeartbeat_RetryAfterOnlyOn429And503(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		code   int
		header string
		want   time.Duration
	}{
		{name: "429 seconds", code: 429, header: "30", want: 30 * time.Second},
		{name: "503 date", code: 503, header: "Mon, 06 Jul 2026 12:02:00 GMT", want: 2 * time.Minute},
		{name: "503 huge clamped", code: 503, header: "86400", want: 5 * time.Minute},
		{name: "500 ignores it", code: 500, header: "30"},
		{name: "429 garbage is none", code: 429, header: "soon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.header)
				w.WriteHeader(tt.code)
			})
			c, _ := newTestClient(t, srv, func(o *clientArgs) { o.Now = func() time.Time { return now } })
			_, err := c.PostHeartbeat(t.Context(), nil)
			var se *StatusError
			if !errors.As(err, &se) || se.Code != tt.code || se.RetryAfter != tt.want {
				t.Fatalf("err = %#v, want code %d retry %s", se, tt.code, tt.want)
			}
			got, ok := RetryAfter(err)
			if got != tt.want || ok != (tt.want > 0) {
				t.Errorf("RetryAfter = %s, %t", got, ok)
			}
		})
	}
}

func TestPostHeartbeat_ParsesVerdictFromSuccess(t *testing.T) {
	over := `{"availableUpdates":[],"pad":"` + strings.Repeat("x", 128<<10) + `"}`
	tests := []struct {
		name string
		code int
		body string
		want Verdict
		// contentType is application/json when empty, none at all for "-".
		contentType string
	}{
		{name: "list with other keys ignored", code: 200,
			body: `{"status":"ok","availableUpdates":[{"name":"cilium","current":"1.15.0","latest":"1.16.1","extra":1}],"x":{}}`,
			want: Verdict{Present: true, Updates: []wire.AvailableUpdate{{Name: "cilium", Current: "1.15.0", Latest: "1.16.1"}}}},
		{name: "entry with name only", code: 202, body: `{"availableUpdates":[{"name":"a"},{"name":"b","latest":"2"}]}`,
			want: Verdict{Present: true, Updates: []wire.AvailableUpdate{{Name: "a"}, {Name: "b", Latest: "2"}}}},
		{name: "empty list is a clearing verdict", code: 200, body: `{"availableUpdates":[]}`,
			want: Verdict{Present: true, Updates: []wire.AvailableUpdate{}}},
		{name: "legacy body", code: 200, body: `{"status":"ok"}`},
		{name: "null key", code: 200, body: `{"availableUpdates":null}`},
		{name: "not JSON", code: 200, body: `<html>ok</html>`},
		{name: "empty body", code: 200, body: ``},
		{name: "no content", code: 204, body: ``},
		{name: "top-level list", code: 200, body: `[{"name":"a"}]`},
		{name: "wrong type", code: 200, body: `{"availableUpdates":"cilium"}`},
		{name: "entry without name", code: 200, body: `{"availableUpdates":[{"name":"a"},{"latest":"2"}]}`},
		{name: "null entry", code: 200, body: `{"availableUpdates":[null]}`},
		{name: "key in another case", code: 200, body: `{"AvailableUpdates":[]}`},
		{name: "truncated JSON", code: 200, body: `{"availableUpdates":[{"name":"a"}`},
		{name: "body over 128 KiB", code: 200, body: over},
		{name: "verdict in a text/html answer", code: 200, body: `{"availableUpdates":[]}`, contentType: "text/html"},
		{name: "verdict with no Content-Type", code: 200, body: `{"availableUpdates":[]}`, contentType: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch tt.contentType {
				case "":
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
				case "-":
					w.Header()["Content-Type"] = nil // no sniffing either
				default:
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.code)
				_, _ = io.WriteString(w, tt.body)
			})
			c, _ := newTestClient(t, srv, nil)
			got, err := c.PostHeartbeat(t.Context(), []byte(`{}`))
			if err != nil {
				t.Fatalf("a 2xx must succeed whatever its body: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("verdict = %#v, want %#v", got, tt.want)
			}
			if got.Present && got.Updates == nil {
				t.Error("a present verdict must carry a non-nil list")
			}
		})
	}
}

func TestPostHeartbeat_TokenProblemsSendNothing(t *testing.T) {
	tests := []struct {
		name  string
		creds *fakeCredentials
	}{
		{name: "source fails", creds: &fakeCredentials{err: errors.New("secret not mounted")}},
		{name: "empty token", creds: &fakeCredentials{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := 0
			srv := newTestServer(t, func(http.ResponseWriter, *http.Request) { hits++ })
			c, _ := newTestClient(t, srv, func(o *clientArgs) { o.creds = tt.creds })
			if _, err := c.PostHeartbeat(t.Context(), nil); err == nil {
				t.Fatal("want an error")
			}
			if hits != 0 {
				t.Errorf("server got %d requests without a token", hits)
			}
		})
	}
}
