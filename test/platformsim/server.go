// Package platformsim is a loopback stand-in for the kubehz platform API: the
// heartbeat, desired-state and agent-register endpoints, bearer-token checks
// (a configured token, or one whose hash was registered), a heartbeat
// validator that refuses what the platform refuses, a bounded journal of every
// request, and fault injection for the failure paths an agent must survive.
//
// A heartbeat that is not Content-Type application/json gets 415 where the
// platform would answer 400: the same refusal, named more precisely.
//
// The validator works on decoded JSON, never on the agent's Go types, so a
// drift between the agent's structs and the platform's schema shows up as a
// 400 in a test instead of in production.
package platformsim

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults a test gets when it leaves the matching Options field empty.
const (
	DefaultClusterID = "demo.example.net"
	// DefaultToken has the agent-token format but no value anywhere else.
	DefaultToken      = "khz_agt_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	DefaultMaxRecords = 1000
	// DefaultMaxBodyBytes is far above any legitimate beat (500 nodes are
	// about 100 KiB), so only a runaway body reaches it.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultETag follows the platform's current "<revision>-<bits>" format;
	// clients must treat it as opaque anyway.
	DefaultETag = `"0-000"`
)

// ErrClosed is returned by waits that outlive the server.
var ErrClosed = errors.New("platformsim: server closed")

// Options configure a Server. The zero value is usable.
type Options struct {
	Listen     string // host:port; default 127.0.0.1:0
	ClusterID  string // the one cluster id answered; others get 404
	Token      string // the accepted bearer token; change it later with SetTokens
	PathPrefix string // served under this prefix, as an API_URL with a path would be
	MaxRecords int    // per journal (all requests, accepted beats); oldest dropped
	// MaxBodyBytes bounds a heartbeat body; larger ones get 413.
	MaxBodyBytes int64
	// AllowSchema1 accepts beats without "schema" (or with schema 1), as the
	// platform does for the bash CronJob. It is off by default because this
	// agent always sends schema 2, so a missing key is a bug worth a 400.
	AllowSchema1 bool
	// BindSecret, when set, is the one-time secret every agent-register
	// request must carry; without it registration needs none.
	BindSecret string
	// Now stamps records; default time.Now.
	Now func() time.Time
	// OnRequest sees every record right after it is kept, before the answer
	// is written, on the request's goroutine. It must not block.
	OnRequest func(Request)
}

// Server is a running or not-yet-started simulator. All methods are safe for
// concurrent use.
type Server struct {
	opts    Options
	journal *journal
	closing chan struct{} // closed by Close to release hanging and trickling answers

	mu         sync.Mutex
	tokens     []string
	updates    []AvailableUpdate // nil: key absent from the heartbeat reply
	desiredDoc []byte
	etag       string
	faults     map[Endpoint]*Fault
	// registrations by cluster id; their token hashes authenticate too.
	registrations map[string]Registration
	listener      net.Listener
	http          *http.Server
	served        chan struct{}
	closed        bool
	conns         sync.WaitGroup
	serverURL     string
}

// New prepares a server; Start makes it listen.
func New(opts Options) *Server {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.ClusterID == "" {
		opts.ClusterID = DefaultClusterID
	}
	if opts.Token == "" {
		opts.Token = DefaultToken
	}
	opts.PathPrefix = strings.TrimRight(opts.PathPrefix, "/")
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts:       opts,
		closing:    make(chan struct{}),
		tokens:     []string{opts.Token},
		desiredDoc: defaultDesired,
		etag:       DefaultETag,
		faults:     map[Endpoint]*Fault{},

		registrations: map[string]Registration{},
	}
	s.journal = newJournal(opts.MaxRecords, s.closing)
	return s
}

// defaultDesired authorizes nothing, so an agent pointed at a fresh simulator
// stays report-only.
var defaultDesired = []byte(`{"revision":0,"kubernetesVersion":null,"workerPools":[],` +
	`"execution":{"scaling":false,"upgrades":false,"healing":false}}`)

// Start listens and serves in the background, returning the base URL an agent
// takes as its API URL (prefix included).
func (s *Server) Start() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.listener != nil {
		return "", errors.New("platformsim: Start called twice or after Close")
	}
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return "", fmt.Errorf("listen on %s: %w", s.opts.Listen, err)
	}
	s.listener = ln
	s.served = make(chan struct{})
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.trackConn,
		// Aborted hangs and client hang-ups are the point of many tests, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	s.serverURL = "http://" + ln.Addr().String() + s.opts.PathPrefix
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // always ErrServerClosed after Close
	}()
	return s.serverURL, nil
}

// trackConn counts live connections so Close can wait for every connection
// goroutine net/http started, not just for the accept loop.
func (s *Server) trackConn(_ net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		s.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.conns.Done()
	}
}

// URL is the base URL returned by Start, or "" before it.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serverURL
}

// Close releases held requests, drops every connection and waits until no
// goroutine of the server is left. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	srv, served := s.http, s.served
	s.mu.Unlock()
	if srv == nil {
		return
	}
	_ = srv.Close()
	<-served
	// A connection accepted while the first Close ran is tracked only once
	// Serve has returned; without a second Close it would idle until its
	// header timeout.
	_ = srv.Close()
	s.conns.Wait()
}
