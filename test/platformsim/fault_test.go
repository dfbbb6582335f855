package platformsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"kubehz.dev/agent/shared/testkit"
)

func TestFault_ReplacesAnswers(t *testing.T) {
	date := RetryAfterAt(time.Date(2026, 7, 6, 12, 0, 0, 0, time.FixedZone("CEST", 7200)))
	if date != "Mon, 06 Jul 2026 10:00:00 GMT" {
		t.Fatalf("RetryAfterAt = %q", date)
	}
	type hit struct {
		endpoint Endpoint
		status   int
	}
	beat, desired := EndpointHeartbeat, EndpointDesired
	cases := []struct {
		name   string
		faults []Fault
		hits   []hit
		header string // checked on the first answer
		value  string
		body   string // the first answer's body, when set
	}{
		{"500 for the next two", []Fault{{Status: 500, Count: 2}},
			[]hit{{beat, 500}, {desired, 500}, {beat, 200}, {desired, 200}}, "", "", ""},
		{"429 with Retry-After seconds", []Fault{{Status: 429, RetryAfter: "3", Count: 1}},
			[]hit{{beat, 429}, {beat, 200}}, "Retry-After", "3", ""},
		{"503 with Retry-After date", []Fault{{Status: 503, RetryAfter: date, Count: 1}},
			[]hit{{desired, 503}, {desired, 200}}, "Retry-After", date, ""},
		{"401 despite a good token", []Fault{{Status: 401, Count: 1}},
			[]hit{{beat, 401}, {beat, 200}}, "", "", ""},
		{"403 until cleared", []Fault{{Status: 403}},
			[]hit{{beat, 403}, {desired, 403}, {beat, 403}, {desired, 403}}, "", "", ""},
		{"desired only", []Fault{{Endpoint: desired, Status: 500}},
			[]hit{{beat, 200}, {desired, 500}, {beat, 200}}, "", "", ""},
		{"endpoint fault wins over any", []Fault{{Status: 503}, {Endpoint: beat, Status: 429, Count: 1}},
			[]hit{{beat, 429}, {beat, 503}, {desired, 503}}, "", "", ""},
		{"redirect", []Fault{{Status: 308, Location: "http://127.0.0.1:1/moved", Count: 1}},
			[]hit{{beat, 308}, {beat, 200}}, "Location", "http://127.0.0.1:1/moved", ""},
		{"body replaced", []Fault{{Endpoint: beat, Body: []byte("not json"), Count: 1}},
			[]hit{{beat, 200}}, "", "", "not json"},
		{"204 without a body", []Fault{{Endpoint: desired, Status: 204, Count: 1}},
			[]hit{{desired, 204}, {desired, 200}}, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, Options{})
			for _, f := range tc.faults {
				h.sim.SetFault(f)
			}
			var got []int
			for i, x := range tc.hits {
				a := h.must(map[Endpoint]string{beat: http.MethodPost, desired: http.MethodGet}[x.endpoint],
					map[Endpoint]string{beat: beatPath, desired: desiredPath}[x.endpoint],
					DefaultToken, marshal(t, validBeat()), nil)
				got = append(got, a.status)
				if i > 0 {
					continue
				}
				if tc.header != "" && a.header.Get(tc.header) != tc.value {
					t.Errorf("%s = %q, want %q", tc.header, a.header.Get(tc.header), tc.value)
				}
				if tc.body != "" && string(a.body) != tc.body {
					t.Errorf("body %q, want %q", a.body, tc.body)
				}
				if a.status == 204 && len(a.body) != 0 {
					t.Errorf("204 carried %q", a.body)
				}
			}
			var want []int
			for _, x := range tc.hits {
				want = append(want, x.status)
			}
			if !slices.Equal(got, want) {
				t.Errorf("statuses %v, want %v", got, want)
			}
		})
	}
}

func TestFault_RecordsWhatWasSentButCountsNoBeat(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetFault(Fault{Endpoint: EndpointHeartbeat, Status: 503, Count: 1})
	h.beat(validBeat())
	h.sim.ClearFault()
	h.beat(set(validBeat(), "timestamp", "2026-07-06T09:16:00Z"))
	reqs := h.sim.Requests()
	if len(reqs) != 2 || !reqs[0].Faulted || reqs[0].Status != 503 || reqs[0].Payload == nil {
		t.Fatalf("faulted record: %+v", reqs[0])
	}
	beats := h.sim.Beats()
	if len(beats) != 1 || beats[0].Seq != 2 {
		t.Errorf("accepted beats %+v, want only Seq 2", beats)
	}
}

func TestFault_HangUntilClientGivesUp(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetFault(Fault{Hang: true, Count: 1})
	// The client gives up only once the server holds the request: giving
	// up on a timer could beat a loaded server to it, and leave the fault
	// armed for the next request.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url+desiredPath, nil)
	req.Header.Set("Authorization", "Bearer "+DefaultToken)
	answered := make(chan error, 1)
	go func() {
		resp, err := h.client.Do(req)
		if err != nil {
			answered <- nil
			return
		}
		resp.Body.Close()
		answered <- fmt.Errorf("hung request answered %d", resp.StatusCode)
	}()
	testkit.Await(t, 10*time.Second, "the server to hold the request", func() bool { return len(h.sim.Requests()) == 1 })
	select {
	case err := <-answered:
		t.Fatalf("the client returned while the server held its request: %v", err)
	default:
	}
	cancel()
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if r := h.sim.Requests()[0]; r.Status != 0 || !r.Faulted {
		t.Errorf("hung record: status %d faulted %v", r.Status, r.Faulted)
	}
	waitEnded(t, h.sim, 1)
	if got := h.must(http.MethodGet, desiredPath, DefaultToken, nil, nil); got.status != 200 {
		t.Errorf("after the hang: %d", got.status)
	}
}

func TestFault_CloseReleasesHungAndTricklingRequests(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetFault(Fault{Endpoint: EndpointHeartbeat, Hang: true})
	h.sim.SetFault(Fault{Endpoint: EndpointDesired, Trickle: time.Hour})
	errs := make(chan error, 2)
	go func() {
		_, err := h.do(http.MethodPost, beatPath, DefaultToken, marshal(t, validBeat()), nil)
		errs <- err
	}()
	go func() { _, err := h.do(http.MethodGet, desiredPath, DefaultToken, nil, nil); errs <- err }()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, ep := range []Endpoint{EndpointHeartbeat, EndpointDesired} {
		if _, err := h.sim.WaitRequest(ctx, func(r Request) bool { return r.Endpoint == ep }); err != nil {
			t.Fatalf("waiting for the %s request: %v", ep, err)
		}
	}
	h.sim.Close()
	for range 2 {
		// Close, not the client's own 10 s timeout, must be what ends them.
		var ne net.Error
		switch err := <-errs; {
		case err == nil:
			t.Error("a held request looked answered after Close")
		case errors.As(err, &ne) && ne.Timeout():
			t.Errorf("a held request ran into the client's timeout instead of being released by Close: %v", err)
		}
	}
	for _, r := range h.sim.Requests() {
		waitEnded(t, h.sim, r.Seq)
	}
	if r, err := h.sim.WaitRequest(ctx, func(Request) bool { return false }); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitRequest after Close = %+v, %v; want ErrClosed", r, err)
	}
}

func TestFault_TrickleSendsOneBytePerInterval(t *testing.T) {
	const interval = 15 * time.Millisecond
	h := start(t, Options{})
	doc := `{"revision":1}`
	if err := h.sim.SetDesired([]byte(doc), `"1-000"`); err != nil {
		t.Fatal(err)
	}
	h.sim.SetFault(Fault{Endpoint: EndpointDesired, Trickle: interval})
	got := h.must(http.MethodGet, desiredPath, DefaultToken, nil, nil)
	if got.status != 200 || string(got.body) != doc {
		t.Fatalf("trickled answer %d %q", got.status, got.body)
	}
	// On the simulator's own stamps: a lower bound its ticker guarantees,
	// one interval between each two bytes.
	r := waitEnded(t, h.sim, 1)
	if took, least := r.Ended.Sub(r.Time), time.Duration(len(doc)-1)*interval; took < least {
		t.Errorf("the answer was written in %v, want at least %v", took, least)
	}
}

func TestFault_OversizeBodyIsValidJSON(t *testing.T) {
	// Past the agent's 1 MiB desired limit and 128 KiB verdict limit; kept
	// small because the race detector makes JSON scanning slow.
	const size = 2 << 20
	cases := []struct {
		endpoint Endpoint
		method   string
		path     string
		prefix   string
	}{
		{EndpointHeartbeat, http.MethodPost, beatPath, `{"status":"ok","availableUpdates":[{"name":"addon-0",`},
		{EndpointDesired, http.MethodGet, desiredPath, `{"revision":1000,"kubernetesVersion":null,"workerPools":[{"name":"pool-0",`},
	}
	for _, tc := range cases {
		t.Run(string(tc.endpoint), func(t *testing.T) {
			h := start(t, Options{})
			h.sim.SetFault(Fault{Endpoint: tc.endpoint, OversizeBytes: size})
			got := h.must(tc.method, tc.path, DefaultToken, marshal(t, validBeat()), nil)
			if got.status != 200 || len(got.body) < size || len(got.body) > size+128 {
				t.Fatalf("status %d, %d bytes; want 200 and just over %d", got.status, len(got.body), size)
			}
			if !bytes.HasPrefix(got.body, []byte(tc.prefix)) || !json.Valid(got.body) {
				t.Errorf("oversize body is not the expected JSON: %.80s…", got.body)
			}
		})
	}
}

// waitEnded waits for the record seq names to be marked ended and returns it.
func waitEnded(t *testing.T, sim *Server, seq uint64) Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		for _, r := range sim.Requests() {
			if r.Seq == seq && !r.Ended.IsZero() {
				return r
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("request %d not marked ended", seq)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
