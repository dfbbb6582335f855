package platform

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"kubehz.dev/agent/shared/token"
)

// pipeListener serves HTTP over in-memory connections (net.Pipe). Unlike a
// loopback socket, a goroutine blocked on one is durably blocked, so a test
// on it can run in a synctest bubble and measure the client's timeouts on
// the bubble's clock, exactly, instead of on the machine's.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newPipeTransport serves h in the calling bubble until the test ends and
// returns a transport whose every connection reaches it.
func newPipeTransport(t *testing.T, h http.HandlerFunc) *http.Transport {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	tr := newTransport(nil)
	tr.DialContext = l.dial
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return tr
}

// fakeCredentials counts how often the client asked for and invalidated the token.
type fakeCredentials struct {
	mu          sync.Mutex
	tok         token.Token
	err         error
	calls       int
	invalidated int
}

var _ Credentials = (*fakeCredentials)(nil)

func (f *fakeCredentials) Token(context.Context) (token.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.tok, f.err
}

func (f *fakeCredentials) Invalidate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.invalidated++
}

func (f *fakeCredentials) invalidations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.invalidated
}

// countingTransport counts the response body bytes the client pulls, which
// is what the caps bound; the server's write count would include kernel
// buffers the client never read.
type countingTransport struct {
	base *http.Transport
	read atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.read}
	}
	return resp, err
}

func (t *countingTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
