package health

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

// patience bounds real time spent waiting on goroutines; it is a deadline for
// a hung test, never a delay a passing test sits through.
const patience = 10 * time.Second

const interval = time.Minute

// Readyz answers the stub apiserver gives.
const (
	answerPassing int32 = iota
	answerEtcdDown
	answerForbidden
)

// apiserverStub stands in for the apiserver over TLS, serving /readyz only.
type apiserverStub struct {
	srv    *httptest.Server
	answer atomic.Int32
	hits   atomic.Int32
	// ca, when set, is what a client trusts instead of srv's certificate.
	ca []byte
	// members are the PEMs of an HA stub's members, in turn.
	members [][]byte
}

func newAPIServerStub(t *testing.T) *apiserverStub {
	s := newUnstartedStub(t)
	s.srv.StartTLS()
	return s
}

// newHAStub is the stub as an HA control plane behind one address: each
// handshake is answered by the next member, each with its own serving
// certificate expiring at its notAfter, all of them trusted.
func newHAStub(t *testing.T, notAfters ...time.Time) *apiserverStub {
	s := newUnstartedStub(t)
	var members []tls.Certificate
	for _, at := range notAfters {
		cert, certPEM := servingCertificate(t, at)
		members = append(members, cert)
		s.members = append(s.members, certPEM)
		s.ca = append(s.ca, certPEM...)
	}
	var next atomic.Int32
	// Asked on every handshake, which GetCertificate is not when the client
	// names no server (it dials an IP).
	s.srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return &tls.Config{Certificates: []tls.Certificate{members[int(next.Add(1)-1)%len(members)]}}, nil
	}}
	s.srv.StartTLS()
	return s
}

func newUnstartedStub(t *testing.T) *apiserverStub {
	s := &apiserverStub{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		s.hits.Add(1)
		if _, verbose := r.URL.Query()["verbose"]; !verbose {
			t.Errorf("readyz asked without verbose: %s", r.URL)
		}
		switch s.answer.Load() {
		case answerPassing:
			fmt.Fprint(w, readyzPassing)
		case answerEtcdDown:
			// As the apiserver does: the report is the 500's body.
			http.Error(w, strings.TrimSuffix(readyzEtcdDown, "\n"), http.StatusInternalServerError)
		case answerForbidden:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
				`"message":"forbidden: User \"system:serviceaccount:kubehz:observer\" cannot get path \"/readyz\"",`+
				`"reason":"Forbidden","details":{},"code":403}`)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

type harness struct {
	m        *Monitor
	clk      *testingclock.FakeClock
	notified atomic.Int32
	logs     testkit.Logs

	mu   sync.Mutex
	seen []*wire.Certificates // the expiry each notification found
}

// probes runs n more probes, one an interval, each to its end: the probe
// loop re-arms its timer once a probe has ended.
func (h *harness) probes(t *testing.T, n int) {
	t.Helper()
	for range n {
		testkit.Await(t, patience, "the probe to end", h.clk.HasWaiters)
		h.clk.Step(interval)
	}
	testkit.Await(t, patience, "the probe to end", h.clk.HasWaiters)
}

// notifiedWith reports whether a notification found the expiry want.
func (h *harness) notifiedWith(want *wire.Certificates) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.seen, func(c *wire.Certificates) bool { return reflect.DeepEqual(c, want) })
}

func fakeSource(client *fake.Clientset) Source {
	return Source{Pods: kubeapitest.Reader[*kubeapi.Pod, *kubeapi.PodList](client.CoreV1().Pods("kube-system")),
		CSRs: kubeapitest.Reader[*kubeapi.CertificateSigningRequest, *kubeapi.CertificateSigningRequestList](client.CertificatesV1().CertificateSigningRequests())}
}

// start runs a Monitor over the fake clientset and, when stub is not nil, the
// stub apiserver; cleanup cancels it and checks that Run returns nil.
func start(t *testing.T, client *fake.Clientset, stub *apiserverStub) *harness {
	h := &harness{clk: testingclock.NewFakeClock(t0)}
	src := fakeSource(client)
	var cfg *rest.Config
	if stub != nil {
		// The readyz probe goes through a real client-go request to the stub.
		cfg = trusting(stub.srv)
		if stub.ca != nil {
			cfg.CAData = stub.ca
		}
		api, err := kubeapi.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		src.Raw = api.Raw()
	}
	h.m = New(src, cfg, h.clk, Options{Interval: interval, Log: h.logs.Logger(), Notify: func() {
		h.notified.Add(1)
		c := h.m.Certificates()
		h.mu.Lock()
		h.seen = append(h.seen, c)
		h.mu.Unlock()
	}})

	testkit.Start(t, patience, h.m.Run)
	return h
}

func await[T any](t *testing.T, what string, get func() T, want T) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		got := get()
		if reflect.DeepEqual(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %+v, want %+v", what, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func expires(at time.Time) *wire.Certificates {
	return &wire.Certificates{ExpiresAt: at.UTC().Format(time.RFC3339)}
}
