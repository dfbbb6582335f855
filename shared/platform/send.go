package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"kubehz.dev/agent/shared/token"
)

const (
	// maxDrainBytes is what is read and thrown away after a response so its
	// connection can be reused; a longer body costs a new connection instead
	// of an unbounded read.
	maxDrainBytes = 64 << 10
	// snippetBytes of an error body reach the debug log, enough for the
	// platform's validation message and no more.
	snippetBytes = 256
	// maxTargetBytes clamps a redirect target quoted in an error.
	maxTargetBytes = 200
)

// request is one call to the platform: op names it in errors.
type request struct {
	op          string
	method      string
	url         string
	body        []byte
	header      http.Header
	notModified bool // 304 is an answer, not an error
	// anonymous sends no Authorization header (registration has no token
	// yet); redact is then what to mask in a logged error body.
	anonymous bool
	redact    string
}

// send makes one authorized request. It returns the response only for a 2xx
// (or an allowed 304); the caller then owns the body and must closeBody it.
// Every other outcome is an error and the body is already closed.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	secret := r.redact
	if !r.anonymous {
		tok, err := c.creds.Token(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: read agent token: %w", r.op, err)
		}
		if tok == "" {
			return nil, fmt.Errorf("%s: agent token is empty", r.op)
		}
		secret = tok.Reveal()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return nil, fmt.Errorf("%s: build request: %w", r.op, err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if !r.anonymous {
		req.Header.Set("Authorization", "Bearer "+secret)
	}

	// A transport error names the method and URL, never a header; the URL
	// is masked all the same, for a token pasted into KUBEHZ_API_URL.
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = token.Redact(ue.URL)
		}
		return nil, fmt.Errorf("%s: %w", r.op, err)
	}
	code := resp.StatusCode
	if code >= 200 && code < 300 || code == http.StatusNotModified && r.notModified {
		return resp, nil
	}
	defer closeBody(resp.Body)
	c.logSnippet(r.op, resp, secret)
	if code >= 300 && code < 400 && code != http.StatusNotModified {
		return nil, fmt.Errorf("%s: %w", r.op, &RedirectError{Code: code, Target: redirectTarget(resp, secret)})
	}
	if code == http.StatusUnauthorized && !r.anonymous {
		c.creds.Invalidate()
	}
	se := &StatusError{Code: code}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	}
	return nil, fmt.Errorf("%s: %w", r.op, se)
}

// maskSecret masks secret in text, as it is and as a JSON string holds it
// (a body that echoes the request escapes " \ < > &), and a start of it that
// ends the text (a body cut by the read budget), then any run that starts
// with the token prefix.
func maskSecret(text, secret string) string {
	const mask = "<redacted>"
	if secret != "" { // ReplaceAll of "" would insert the mask between every character
		if quoted, err := json.Marshal(secret); err == nil {
			text = strings.ReplaceAll(text, string(quoted[1:len(quoted)-1]), mask)
		}
		text = strings.ReplaceAll(text, secret, mask)
		for n := min(len(secret)-1, len(text)); n > 0; n-- {
			if strings.HasSuffix(text, secret[:n]) {
				text = text[:len(text)-n] + mask
				break
			}
		}
	}
	return token.Redact(text)
}

// holds reports whether s holds secret, or anything token.Redact masks.
func holds(s, secret string) bool {
	return secret != "" && strings.Contains(s, secret) || token.Redact(s) != s
}

// closeBody drains a bounded tail so the connection can go back to the
// pool, then closes.
func closeBody(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, maxDrainBytes)
	_ = body.Close()
}

// readCapped reads at most limit bytes; over reports whether more was there.
func readCapped(r io.Reader, limit int64) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], true, err
	}
	return data, false, err
}

// logSnippet puts the start of an error body in the debug log: the platform
// explains a 400 there. It is read from the same bounded budget closeBody
// drains, cleaned of control characters and of the secret should the server
// ever echo it: whole, cut short by the read budget, or (for the token) in
// any form that starts with its prefix. The masking comes after the text is
// made valid UTF-8, which shortens it, so nothing the masks missed moves up
// into the part that is logged.
func (c *Client) logSnippet(op string, resp *http.Response, secret string) {
	if c.log == nil {
		return
	}
	head, _, _ := readCapped(resp.Body, 4<<10)
	text := maskSecret(strings.ToValidUTF8(string(head), "?"), secret)
	text = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, text)
	if len(text) > snippetBytes {
		text = strings.ToValidUTF8(text[:snippetBytes], "")
	}
	c.log.DebugContext(resp.Request.Context(), "Platform answered an error",
		"op", op, "status", resp.StatusCode, "body", text)
}

// redirectTarget keeps only scheme, host and path of Location, resolved
// against the request, so an operator sees where the platform moved without
// its query string reaching a log. A platform that echoes the credential
// into the path would put it in the log and the status file: such a path,
// escaped or not, is withheld, and the credential is masked in the rest
// before the cut, so that no start of it survives.
func redirectTarget(resp *http.Response, secret string) string {
	loc, err := resp.Location()
	if err != nil {
		if !errors.Is(err, http.ErrNoLocation) {
			return "an unparsable location"
		}
		return ""
	}
	clean := url.URL{Scheme: loc.Scheme, Host: loc.Host}
	path := loc.EscapedPath()
	if holds(loc.Path, secret) || holds(path, secret) {
		path = "/<withheld: it holds the credential>"
	}
	target := token.Redact(clean.String() + path)
	if secret != "" {
		target = strings.ReplaceAll(target, secret, "<redacted>")
	}
	if len(target) > maxTargetBytes {
		target = strings.ToValidUTF8(target[:maxTargetBytes], "") + "…"
	}
	return target
}
