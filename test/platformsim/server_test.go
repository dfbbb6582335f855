package platformsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestServer_AuthAndRouting(t *testing.T) {
	h := start(t, Options{})
	beat := marshal(t, validBeat())
	cases := []struct {
		name   string
		method string
		path   string
		header http.Header
		want   int
	}{
		{"valid", http.MethodPost, beatPath, bearerHeader(DefaultToken), http.StatusOK},
		{"no token", http.MethodPost, beatPath, nil, http.StatusUnauthorized},
		{"wrong token", http.MethodPost, beatPath, bearerHeader("khz_agt_wrong"), http.StatusUnauthorized},
		{"not bearer", http.MethodPost, beatPath, http.Header{"Authorization": {"Basic " + DefaultToken}}, http.StatusUnauthorized},
		{"wrong token on desired", http.MethodGet, desiredPath, bearerHeader("x"), http.StatusUnauthorized},
		{"escaped cluster id", http.MethodPost, "/api/clusters/demo%2Eexample%2Enet/heartbeat", bearerHeader(DefaultToken), http.StatusOK},
		{"other cluster", http.MethodPost, "/api/clusters/other.example.net/heartbeat", bearerHeader(DefaultToken), http.StatusNotFound},
		{"unknown endpoint", http.MethodGet, "/api/clusters/" + DefaultClusterID + "/status", bearerHeader(DefaultToken), http.StatusNotFound},
		{"outside the api", http.MethodGet, "/healthz", nil, http.StatusNotFound},
		{"GET heartbeat", http.MethodGet, beatPath, bearerHeader(DefaultToken), http.StatusMethodNotAllowed},
		{"POST desired", http.MethodPost, desiredPath, bearerHeader(DefaultToken), http.StatusMethodNotAllowed},
		{"no token and no Content-Type", http.MethodPost, beatPath, http.Header{"Content-Type": nil}, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := h.must(tc.method, tc.path, "", beat, tc.header)
			if got.status != tc.want {
				t.Errorf("status %d, want %d; body %s", got.status, tc.want, got.body)
			}
		})
	}
	var tokens []string
	for _, r := range h.sim.Requests() {
		tokens = append(tokens, r.Token)
	}
	want := []string{DefaultToken, "", "khz_agt_wrong", "", "x", DefaultToken, DefaultToken, DefaultToken, "", DefaultToken, DefaultToken, ""}
	if !slices.Equal(tokens, want) {
		t.Errorf("recorded tokens\n got %q\nwant %q", tokens, want)
	}
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func TestServer_UnescapesSlashInClusterID(t *testing.T) {
	h := start(t, Options{ClusterID: "a/b", PathPrefix: "/kubehz/"})
	if !strings.HasSuffix(h.url, "/kubehz") {
		t.Fatalf("URL %q lacks the prefix", h.url)
	}
	got := h.must(http.MethodGet, "/api/clusters/a%2Fb/desired", DefaultToken, nil, nil)
	if got.status != http.StatusOK {
		t.Fatalf("status %d, want 200", got.status)
	}
	if r := h.sim.Requests()[0]; r.ClusterID != "a/b" || r.Path != "/kubehz/api/clusters/a%2Fb/desired" {
		t.Errorf("recorded cluster %q path %q", r.ClusterID, r.Path)
	}
}

func TestServer_TokenRotation(t *testing.T) {
	const next = "khz_agt_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	h := start(t, Options{})
	body := marshal(t, validBeat())
	status := func(token string) int {
		return h.must(http.MethodPost, beatPath, token, body, nil).status
	}
	h.sim.SetTokens(DefaultToken, next) // overlap while the Secret rolls
	if a, b := status(DefaultToken), status(next); a != 200 || b != 200 {
		t.Fatalf("during overlap: old %d, new %d; want 200, 200", a, b)
	}
	h.sim.SetTokens(next)
	if a, b := status(DefaultToken), status(next); a != 401 || b != 200 {
		t.Fatalf("after rotation: old %d, new %d; want 401, 200", a, b)
	}
	h.sim.SetTokens()
	if a := status(next); a != 401 {
		t.Fatalf("with no token accepted: %d, want 401", a)
	}
	beats := h.sim.Beats()
	if len(beats) != 3 || beats[2].Token != next {
		t.Errorf("accepted beats %d, last token %q", len(beats), beats[len(beats)-1].Token)
	}
}

func TestServer_RefusesUnreadableBodies(t *testing.T) {
	h := start(t, Options{MaxBodyBytes: 64 << 10})
	big := validBeat()
	big["padding"] = strings.Repeat("x", 64<<10)
	beat := marshal(t, validBeat())
	typed := func(contentType ...string) http.Header { return http.Header{"Content-Type": contentType} }
	cases := []struct {
		name   string
		body   []byte
		header http.Header // nil: Content-Type: application/json
		want   int
	}{
		{"not JSON", []byte("schema=2"), nil, http.StatusBadRequest},
		{"empty", nil, nil, http.StatusBadRequest},
		{"JSON array", []byte("[]"), nil, http.StatusBadRequest},
		{"JSON null", []byte("null"), nil, http.StatusBadRequest},
		{"trailing data", append(marshal(t, validBeat()), []byte(" {}")...), nil, http.StatusBadRequest},
		{"over the limit", marshal(t, big), nil, http.StatusRequestEntityTooLarge},
		{"no Content-Type", beat, typed(), http.StatusUnsupportedMediaType},
		{"text/plain", beat, typed("text/plain"), http.StatusUnsupportedMediaType},
		{"form", beat, typed("application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType},
		{"json suffix type", beat, typed("application/vnd.api+json"), http.StatusUnsupportedMediaType},
		{"latin-1 charset", beat, typed("application/json; charset=iso-8859-1"), http.StatusUnsupportedMediaType},
		{"unparsable Content-Type", beat, typed("application/json; charset"), http.StatusUnsupportedMediaType},
		{"charset utf-8", beat, typed("application/json; charset=utf-8"), http.StatusOK},
		{"upper case", beat, typed("Application/JSON; Charset=UTF-8"), http.StatusOK},
		{"other parameter", beat, typed("application/json; v=2"), http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.must(http.MethodPost, beatPath, DefaultToken, tc.body, tc.header); got.status != tc.want {
				t.Errorf("status %d, want %d; body %s", got.status, tc.want, got.body)
			}
		})
	}
}

func TestServer_AvailableUpdatesTristate(t *testing.T) {
	h := start(t, Options{})
	cases := []struct {
		name    string
		updates []AvailableUpdate
		want    string
	}{
		{"absent by default", nil, `{"status":"ok"}`},
		{"empty verdict", []AvailableUpdate{}, `{"availableUpdates":[],"status":"ok"}`},
		{"updates", []AvailableUpdate{{Name: "cilium", Current: "1.16.1", Latest: "1.17.4"}, {Name: "bare"}},
			`{"availableUpdates":[{"name":"cilium","current":"1.16.1","latest":"1.17.4"},{"name":"bare"}],"status":"ok"}`},
		{"absent again", nil, `{"status":"ok"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.sim.SetAvailableUpdates(tc.updates)
			got := h.beat(validBeat())
			if got.status != http.StatusOK || string(got.body) != tc.want {
				t.Errorf("got %d %s, want 200 %s", got.status, got.body, tc.want)
			}
		})
	}
}

func TestRequest_LookupAndNumber(t *testing.T) {
	r := Request{Payload: validBeat()}
	if v, ok := r.Lookup("agent.mode"); !ok || v != "operator" {
		t.Errorf("agent.mode = %v, %v", v, ok)
	}
	if v, ok := r.Lookup("actions.0.revision"); !ok {
		t.Error("actions.0.revision missing")
	} else if n, ok := Number(v); !ok || n != 12 {
		t.Errorf("revision = %v", v)
	}
	for _, path := range []string{"nodes.2.name", "nodes.x", "agent.mode.deeper", "absent"} {
		if v, ok := r.Lookup(path); ok {
			t.Errorf("Lookup(%q) = %v, want not found", path, v)
		}
	}
	raw, _ := json.Marshal(r.Payload)
	if !json.Valid(raw) {
		t.Error("payload does not round-trip")
	}
}
