package platform

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"kubehz.dev/agent/shared/token"
)

// DefaultTimeout bounds one whole request, body read included
// (docs/contract.md#conventions).
const DefaultTimeout = 15 * time.Second

// Credentials hands out the agent token. It is the only thing the client
// needs from the token source, so the two evolve apart.
type Credentials interface {
	Token(ctx context.Context) (token.Token, error)
	// Invalidate is called after a 401, so a rotated token is re-read.
	Invalidate()
}

// Options are what a Client or a Registrar can do without; the two take
// the same.
type Options struct {
	// UserAgent defaults to "kubehz-agent/dev", the unstamped build's name.
	UserAgent string
	// Timeout per request; zero or less means DefaultTimeout.
	Timeout time.Duration

	// TLSConfig replaces the system trust settings, e.g. to trust a test
	// server. MinVersion is still raised to TLS 1.2.
	TLSConfig *tls.Config
	// Transport replaces the whole transport (tests only); it excludes TLSConfig.
	Transport http.RoundTripper
	// Wrap, when set, wraps the transport closest to the wire: the actor
	// refuses there any request of a leadership term that has ended.
	Wrap func(http.RoundTripper) http.RoundTripper
	// Now is the clock Retry-After dates are measured against; time.Now if nil.
	Now func() time.Time
	// Logger receives a short, sanitized body snippet of error answers at
	// debug level; nil logs nothing.
	Logger *slog.Logger
}

// Client talks to the two platform endpoints. It is safe for concurrent use.
type Client struct {
	http         *http.Client
	creds        Credentials
	userAgent    string
	heartbeatURL string
	desiredURL   string
	now          func() time.Time
	log          *slog.Logger
}

// New checks its arguments and builds a client for clusterID's two
// endpoints under base, the platform root: a path prefix is kept, trailing
// slashes are not, and only https, or http to a loopback host, is accepted.
// It makes no request.
func New(base *url.URL, clusterID string, creds Credentials, opts Options) (*Client, error) {
	if err := checkBaseURL(base); err != nil {
		return nil, err
	}
	if clusterID == "" || clusterID == "." || clusterID == ".." {
		// "." and ".." survive path escaping and would be folded away by
		// any proxy that cleans paths, landing on another endpoint.
		return nil, fmt.Errorf("platform client: cluster id %q is not a usable path segment", clusterID)
	}
	if creds == nil {
		return nil, errors.New("platform client: no credentials")
	}
	c, err := build(creds, opts)
	if err != nil {
		return nil, err
	}
	c.heartbeatURL = endpoint(base, clusterID, "heartbeat")
	c.desiredURL = endpoint(base, clusterID, "desired")
	return c, nil
}

// build makes the HTTP side of a client from checked arguments; creds is
// nil for a Registrar.
func build(creds Credentials, opts Options) (*Client, error) {
	if opts.Transport != nil && opts.TLSConfig != nil {
		return nil, errors.New("platform client: set Transport or TLSConfig, not both")
	}
	c := &Client{
		creds:     creds,
		userAgent: opts.UserAgent,
		now:       opts.Now,
		log:       opts.Logger,
	}
	if c.userAgent == "" {
		c.userAgent = "kubehz-agent/dev"
	}
	if c.now == nil {
		c.now = time.Now
	}
	transport := opts.Transport
	if transport == nil {
		transport = newTransport(opts.TLSConfig)
	}
	if opts.Wrap != nil {
		transport = opts.Wrap(transport)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c.http = &http.Client{
		Transport: transport,
		Timeout:   timeout,
		// Following a redirect would carry the bearer token to a URL nobody
		// configured; the 3xx comes back to send, which refuses it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// CloseIdleConnections releases pooled connections, e.g. at shutdown.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// checkBaseURL repeats config validation: the bearer token must never cross
// a network in clear text, so plain http is only for a loopback listener.
func checkBaseURL(u *url.URL) error {
	switch {
	case u == nil:
		return errors.New("platform client: no base URL")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("platform client: base URL %q has no host", bare(u))
	case u.User != nil:
		return fmt.Errorf("platform client: base URL %q must not carry credentials", bare(u))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("platform client: base URL %q must not have a query or fragment", bare(u))
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("platform client: base URL %q uses http to a non-loopback host; use https", bare(u))
	default:
		return fmt.Errorf("platform client: base URL %q: scheme must be https", bare(u))
	}
}

// bare prints a URL without userinfo, query or fragment: any of them could
// hold a credential pasted in the wrong place.
func bare(u *url.URL) string {
	b := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return token.Redact(b.String())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpoint builds {base}/api/clusters/{id}/{leaf} as text. Going through the
// escaped form keeps %2F in the id as an escape: url.URL would otherwise
// re-derive the path and turn it back into a separator.
func endpoint(base *url.URL, clusterID, leaf string) string {
	return under(base, "/api/clusters/"+url.PathEscape(clusterID)+"/"+leaf)
}

// under appends an escaped path to the base URL's scheme, host and prefix.
func under(base *url.URL, escapedPath string) string {
	u := url.URL{Scheme: strings.ToLower(base.Scheme), Host: base.Host}
	prefix := strings.TrimRight(base.EscapedPath(), "/")
	return u.String() + prefix + escapedPath
}

// newTransport is http.DefaultTransport's behaviour (proxy from the
// environment, HTTP/2, dial and handshake timeouts) with a TLS floor and
// bounds sized for an agent that talks to one host every few seconds.
func newTransport(tlsConfig *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	cfg := &tls.Config{}
	if tlsConfig != nil {
		cfg = tlsConfig.Clone()
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	t.TLSClientConfig = cfg
	t.MaxIdleConns = 4
	t.MaxIdleConnsPerHost = 2
	t.IdleConnTimeout = 90 * time.Second
	// Headers are not bounded by the body caps; 64 KiB is ample for the
	// platform and keeps a hostile answer from costing megabytes.
	t.MaxResponseHeaderBytes = 64 << 10
	return t
}
