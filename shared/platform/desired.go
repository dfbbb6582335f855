package platform

import (
	"context"
	"fmt"
	"net/http"
)

// maxDesiredBytes caps the desired-state document
// (docs/contract.md#desired-request).
const maxDesiredBytes = 1 << 20

// DesiredResponse is one answer from the desired-state endpoint, undecoded.
type DesiredResponse struct {
	// NotModified is a 304: the cached document still holds; Body is nil.
	NotModified bool
	// ETag is the response header byte for byte, "" when absent. It is
	// opaque: cache it and echo it, never parse it.
	ETag string
	// Body is the 2xx document, at most 1 MiB; possibly empty (e.g. 204).
	Body []byte
	// ContentType is the 2xx answer's Content-Type header, as sent: the
	// caller acts only on a document that says it is JSON (IsJSON).
	ContentType string
}

// GetDesired fetches the desired-state document, conditionally when etag is not
// "" (docs/contract.md#desired-request). Errors follow PostHeartbeat's; a 2xx
// body over the cap is an error too, since a truncated document must never be
// acted on.
func (c *Client) GetDesired(ctx context.Context, etag string) (DesiredResponse, error) {
	header := http.Header{}
	if etag != "" {
		header["If-None-Match"] = []string{etag}
	}
	resp, err := c.send(ctx, request{
		op:          "fetch desired state",
		method:      http.MethodGet,
		url:         c.desiredURL,
		header:      header,
		notModified: true,
	})
	if err != nil {
		return DesiredResponse{}, err
	}
	defer closeBody(resp.Body)

	out := DesiredResponse{ETag: resp.Header.Get("ETag")}
	if resp.StatusCode == http.StatusNotModified {
		out.NotModified = true
		return out, nil
	}
	body, over, err := readCapped(resp.Body, maxDesiredBytes)
	if err != nil {
		return DesiredResponse{}, fmt.Errorf("fetch desired state: read body: %w", err)
	}
	if over {
		return DesiredResponse{}, fmt.Errorf("fetch desired state: document exceeds %d bytes", maxDesiredBytes)
	}
	out.Body, out.ContentType = body, resp.Header.Get("Content-Type")
	return out, nil
}
