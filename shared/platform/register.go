package platform

import (
	"context"
	"net/http"
	"net/url"
)

// Registrar makes the one platform call that carries no credential:
// announcing a new identity's hashes (POST /api/clusters/agent-register).
// It holds no token, so it cannot reach the heartbeat or desired endpoints.
type Registrar struct {
	c   *Client
	url string
}

// NewRegistrar checks base like New. It takes no credentials, as a
// registration must never send a bearer token, and no cluster ID: the
// cluster travels in the body.
func NewRegistrar(base *url.URL, opts Options) (*Registrar, error) {
	if err := checkBaseURL(base); err != nil {
		return nil, err
	}
	c, err := build(nil, opts)
	if err != nil {
		return nil, err
	}
	return &Registrar{c: c, url: under(base, "/api/clusters/agent-register")}, nil
}

// Register posts one encoded registration body. Any 2xx is success; errors
// are *StatusError (or *RedirectError) for an answer, anything else for a
// failed exchange. redact is masked in a logged error body (the bind
// secret, should the platform echo it).
func (r *Registrar) Register(ctx context.Context, body []byte, redact string) error {
	resp, err := r.c.send(ctx, request{
		op:        "register agent",
		method:    http.MethodPost,
		url:       r.url,
		body:      body,
		header:    http.Header{"Content-Type": {"application/json"}},
		anonymous: true,
		redact:    redact,
	})
	if err != nil {
		return err
	}
	closeBody(resp.Body)
	return nil
}

// CloseIdleConnections releases pooled connections.
func (r *Registrar) CloseIdleConnections() { r.c.CloseIdleConnections() }
