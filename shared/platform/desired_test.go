package platform

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestGetDesired_ConditionalGetAndETagEchoedVerbatim(t *testing.T) {
	doc := []byte(`{"revision":7,"execution":{"scaling":true}}`)
	tests := []struct {
		name     string
		etag     string // what the client holds
		serverOn string // the server's current ETag; "" sends none
		want     DesiredResponse
	}{
		{name: "first fetch sends no If-None-Match", etag: "", serverOn: `"7-101"`,
			want: DesiredResponse{ETag: `"7-101"`, Body: doc, ContentType: "application/json"}},
		{name: "unchanged strong tag", etag: `"7-101"`, serverOn: `"7-101"`,
			want: DesiredResponse{NotModified: true, ETag: `"7-101"`}},
		{name: "two-bit format", etag: `"3-10"`, serverOn: `"3-10"`,
			want: DesiredResponse{NotModified: true, ETag: `"3-10"`}},
		{name: "opaque tag", etag: `utterly/opaque token=42`, serverOn: `utterly/opaque token=42`,
			want: DesiredResponse{NotModified: true, ETag: `utterly/opaque token=42`}},
		{name: "weak tag", etag: `W/"x"`, serverOn: `W/"x"`,
			want: DesiredResponse{NotModified: true, ETag: `W/"x"`}},
		{name: "format change costs one 200", etag: `"3-10"`, serverOn: `"7-101"`,
			want: DesiredResponse{ETag: `"7-101"`, Body: doc, ContentType: "application/json"}},
		{name: "missing header reported empty", etag: `"7-101"`, serverOn: "",
			want: DesiredResponse{Body: doc, ContentType: "application/json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inm []string
			var auth string
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				inm, auth = r.Header.Values("If-None-Match"), r.Header.Get("Authorization")
				if tt.serverOn != "" {
					w.Header()["ETag"] = []string{tt.serverOn}
				}
				if tt.serverOn != "" && len(inm) == 1 && inm[0] == tt.serverOn {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(doc)
			})
			c, _ := newTestClient(t, srv, nil)
			got, err := c.GetDesired(t.Context(), tt.etag)
			if err != nil {
				t.Fatalf("GetDesired: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if auth != "Bearer "+secret {
				t.Errorf("Authorization = %q", auth)
			}
			wantINM := []string(nil)
			if tt.etag != "" {
				wantINM = []string{tt.etag}
			}
			if !reflect.DeepEqual(inm, wantINM) {
				t.Errorf("If-None-Match = %q, want %q", inm, wantINM)
			}
		})
	}
}

func TestGetDesired_StatusesAndCap(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		body     []byte
		wantCode int // StatusError code, 0 for a non-status error
		wantAuth bool
		wantOK   bool
	}{
		{name: "401 auth", code: 401, wantCode: 401, wantAuth: true},
		{name: "403 auth", code: 403, wantCode: 403, wantAuth: true},
		{name: "404 generic", code: 404, wantCode: 404},
		{name: "500 generic", code: 500, wantCode: 500},
		{name: "204 is an empty document, left to the decoder", code: 204, wantOK: true},
		{name: "garbage body is handed on undecoded", code: 200, body: []byte("not json"), wantOK: true},
		{name: "exactly 1 MiB accepted", code: 200, body: bytes.Repeat([]byte("a"), 1<<20), wantOK: true},
		{name: "one byte over 1 MiB refused", code: 200, body: bytes.Repeat([]byte("a"), 1<<20+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.code)
				_, _ = w.Write(tt.body)
			})
			c, _ := newTestClient(t, srv, nil)
			got, err := c.GetDesired(t.Context(), `"1-000"`)
			assertNoSecret(t, err)
			if tt.wantOK {
				if err != nil || !bytes.Equal(got.Body, tt.body) || got.NotModified {
					t.Fatalf("GetDesired = %d bytes, %v", len(got.Body), err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			if !reflect.DeepEqual(got, DesiredResponse{}) {
				t.Errorf("an error must come with no document, got %d bytes", len(got.Body))
			}
			var se *StatusError
			if errors.As(err, &se) != (tt.wantCode != 0) || tt.wantCode != 0 && se.Code != tt.wantCode {
				t.Errorf("err = %v, want status %d", err, tt.wantCode)
			}
			if IsAuth(err) != tt.wantAuth {
				t.Errorf("IsAuth = %t", IsAuth(err))
			}
			if tt.wantCode == 0 && !strings.Contains(err.Error(), "exceeds") {
				t.Errorf("cap error unclear: %v", err)
			}
		})
	}
}
