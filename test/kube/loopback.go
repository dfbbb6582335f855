package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"time"
)

// freePort finds an unused loopback port below 32768: the webhook parses
// its port as a signed 16-bit number, and the kernel's ephemeral ports lie
// above that.
func freePort() (int, error) {
	for range 100 {
		port := 20000 + mathrand.IntN(12000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			return port, l.Close()
		}
	}
	return 0, errors.New("no free loopback port in 20000-31999 after 100 tries")
}

// awaitDial waits until addr accepts connections, or p exits.
func awaitDial(ctx context.Context, addr string, p *Process) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn.Close()
		}
		if p.Exited() {
			return errors.New("exited before it listened")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not listening on %s: %w", addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// prefixed copies w's lines with a prefix, or is nil when w is.
func prefixed(w io.Writer, prefix string) io.Writer {
	if w == nil {
		return nil
	}
	return &prefixWriter{w: w, prefix: []byte(prefix)}
}

type prefixWriter struct {
	w      io.Writer
	prefix []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out bytes.Buffer
	for line := range bytes.Lines(b) {
		out.Write(p.prefix)
		out.Write(line)
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
