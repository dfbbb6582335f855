package platformsim

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestDesired_ETagAndNotModified(t *testing.T) {
	h := start(t, Options{})
	get := func(ifNoneMatch string) answer {
		var header http.Header
		if ifNoneMatch != "" {
			header = http.Header{"If-None-Match": {ifNoneMatch}}
		}
		return h.must(http.MethodGet, desiredPath, DefaultToken, nil, header)
	}
	first := get("")
	if first.status != http.StatusOK || first.header.Get("ETag") != DefaultETag || string(first.body) != string(defaultDesired) {
		t.Fatalf("default: %d etag %q body %s", first.status, first.header.Get("ETag"), first.body)
	}
	if got := get(DefaultETag); got.status != http.StatusNotModified || len(got.body) != 0 || got.header.Get("ETag") != DefaultETag {
		t.Errorf("matching If-None-Match: %d etag %q body %q", got.status, got.header.Get("ETag"), got.body)
	}

	doc := map[string]any{"revision": 7, "kubernetesVersion": "v1.35.6",
		"workerPools": []any{map[string]any{"name": "workers-a", "machineType": "cpx31", "desiredReplicas": 3}},
		"execution":   map[string]any{"scaling": true, "upgrades": false, "healing": true}}
	const opaque = `utterly/opaque token=42`
	if err := h.sim.SetDesired(doc, opaque); err != nil {
		t.Fatal(err)
	}
	changed := get(DefaultETag)
	var served map[string]any
	if err := json.Unmarshal(changed.body, &served); err != nil || served["revision"] != 7.0 {
		t.Fatalf("after SetDesired: %d %s (%v)", changed.status, changed.body, err)
	}
	if changed.status != http.StatusOK || changed.header.Get("ETag") != opaque {
		t.Errorf("stale If-None-Match: %d etag %q, want 200 %q", changed.status, changed.header.Get("ETag"), opaque)
	}
	if got := get(opaque); got.status != http.StatusNotModified {
		t.Errorf("opaque ETag echoed back: %d, want 304", got.status)
	}

	if err := h.sim.SetDesired([]byte(`{"revision":`), ""); err != nil {
		t.Fatal(err)
	}
	raw := get(opaque)
	if raw.status != http.StatusOK || raw.header.Get("ETag") != "" || string(raw.body) != `{"revision":` {
		t.Errorf("raw doc without ETag: %d etag %q body %s", raw.status, raw.header.Get("ETag"), raw.body)
	}
	if got := h.sim.Requests()[2]; got.Header.Get("If-None-Match") != DefaultETag || got.Status != http.StatusOK {
		t.Errorf("recorded request: If-None-Match %q status %d", got.Header.Get("If-None-Match"), got.Status)
	}
}

func TestDesired_RejectsUnmarshallableDocument(t *testing.T) {
	sim := New(Options{})
	defer sim.Close()
	if err := sim.SetDesired(map[string]any{"bad": make(chan int)}, "x"); err == nil {
		t.Error("SetDesired accepted a channel")
	}
}
