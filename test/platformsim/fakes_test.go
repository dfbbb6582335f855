package platformsim

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"
)

// harness is one started simulator and a client whose connections die with
// the test, so goleak sees no stray keep-alive goroutines.
type harness struct {
	t      *testing.T
	sim    *Server
	url    string
	client *http.Client
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	sim := New(opts)
	url, err := sim.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	transport := &http.Transport{}
	client := &http.Client{
		Transport: transport,
		Timeout:   10 * time.Second,
		// Redirect faults are judged by the answer itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(func() {
		sim.Close()
		transport.CloseIdleConnections()
	})
	return &harness{t: t, sim: sim, url: url, client: client}
}

// answer is what a request got back.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request. A POST says Content-Type: application/json, as the
// agent does, unless header names Content-Type; a nil value sends none.
func (h *harness) do(method, path, token string, body []byte, header http.Header) (answer, error) {
	req, err := http.NewRequest(method, h.url+path, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, err
}

func (h *harness) must(method, path, token string, body []byte, header http.Header) answer {
	h.t.Helper()
	a, err := h.do(method, path, token, body, header)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

const (
	beatPath    = "/api/clusters/" + DefaultClusterID + "/heartbeat"
	desiredPath = "/api/clusters/" + DefaultClusterID + "/desired"
)

func (h *harness) beat(payload map[string]any) answer {
	h.t.Helper()
	return h.must(http.MethodPost, beatPath, DefaultToken, marshal(h.t, payload), nil)
}
