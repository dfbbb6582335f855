package platform

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// Both tests below run in a synctest bubble over in-memory connections:
// time passes only when every goroutine waits, so how long a call took is
// measured exactly, on the bubble's clock.

func TestBodyCaps_HugeBodiesAreNotReadPastTheCaps(t *testing.T) {
	const huge = 10 << 20 // bytes
	tests := []struct {
		name    string
		code    int
		call    func(*Client) error
		maxRead int64
	}{
		{name: "2xx heartbeat reads verdict cap plus drain", code: 200,
			call:    func(c *Client) error { _, err := c.PostHeartbeat(context.Background(), nil); return err },
			maxRead: 128<<10 + 1 + 64<<10},
		{name: "500 heartbeat reads snippet plus drain", code: 500,
			call:    func(c *Client) error { _, err := c.PostHeartbeat(context.Background(), nil); return err },
			maxRead: 4<<10 + 1 + 64<<10},
		{name: "2xx desired reads document cap plus drain", code: 200,
			call:    func(c *Client) error { _, err := c.GetDesired(context.Background(), ""); return err },
			maxRead: 1<<20 + 1 + 64<<10},
		{name: "redirect reads only the drain", code: 302,
			call:    func(c *Client) error { _, err := c.GetDesired(context.Background(), ""); return err },
			maxRead: 4<<10 + 1 + 64<<10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := newPipeTransport(t, func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(tt.code)
					chunk := bytes.Repeat([]byte("x"), 64<<10)
					for sent := 0; sent < huge; sent += len(chunk) {
						if _, err := w.Write(chunk); err != nil {
							return
						}
					}
					// A client that reads to EOF would now wait for its timeout.
					<-r.Context().Done()
				})
				counter := &countingTransport{base: base}
				c := newPipeClient(t, func(o *clientArgs) {
					o.Transport = counter
					o.Logger = slog.New(slog.DiscardHandler)
				})
				start := time.Now()
				_ = tt.call(c)
				// Nothing in the bubble sleeps: any time passed is a timeout
				// that fired, i.e. the client waited for the body's end.
				if elapsed := time.Since(start); elapsed != 0 {
					t.Errorf("call returned after %s; it must not wait for the body's end", elapsed)
				}
				if got := counter.read.Load(); got > tt.maxRead {
					t.Errorf("read %d body bytes, cap is %d", got, tt.maxRead)
				}
			})
		})
	}
}

// The README's request limit (Delivery): 15 s for a whole
// request, body included, when the caller sets no timeout of its own.
func TestTimeout_HangingServerIsCutOffAtFifteenSeconds(t *testing.T) {
	tests := []struct {
		name        string
		sendHeaders bool
		call        func(context.Context, *Client) error
		wantErr     bool
	}{
		{name: "heartbeat, no headers ever", wantErr: true,
			call: func(ctx context.Context, c *Client) error { _, err := c.PostHeartbeat(ctx, nil); return err }},
		{name: "desired, no headers ever", wantErr: true,
			call: func(ctx context.Context, c *Client) error { _, err := c.GetDesired(ctx, ""); return err }},
		// The 2xx already delivered the beat; only the verdict is lost.
		{name: "heartbeat, body stalls after 200", sendHeaders: true,
			call: func(ctx context.Context, c *Client) error {
				v, err := c.PostHeartbeat(ctx, nil)
				if v.Present {
					return errors.New("verdict from a stalled body")
				}
				return err
			}},
		{name: "desired, body stalls after 200", sendHeaders: true, wantErr: true,
			call: func(ctx context.Context, c *Client) error { _, err := c.GetDesired(ctx, ""); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newPipeTransport(t, func(w http.ResponseWriter, r *http.Request) {
					if tt.sendHeaders {
						w.WriteHeader(http.StatusOK)
						_, _ = io.WriteString(w, `{"availableUpdates":[`)
						w.(http.Flusher).Flush()
					}
					<-r.Context().Done()
				})
				c := newPipeClient(t, func(o *clientArgs) { o.Transport = tr })
				start := time.Now()
				err := tt.call(context.Background(), c)
				if took := time.Since(start); took != 15*time.Second {
					t.Errorf("the hanging call ended after %s, want exactly 15s", took)
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("err = %v, want error %t", err, tt.wantErr)
				}
				var se *StatusError
				if errors.As(err, &se) {
					t.Errorf("a timeout is not a platform answer: %v", err)
				}
				assertNoSecret(t, err)
			})
		})
	}
}

// newPipeClient is a client on a transport from newPipeTransport; edit
// must set Options.Transport.
func newPipeClient(t *testing.T, edit func(*clientArgs)) *Client {
	t.Helper()
	args := clientArgs{base: mustParse(t, "http://127.0.0.1"), clusterID: "demo.example.com",
		creds: &fakeCredentials{tok: secret}}
	edit(&args)
	c, err := args.new()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestTimeout_CallerContextIsHonoured(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c, _ := newTestClient(t, srv, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.PostHeartbeat(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
}
