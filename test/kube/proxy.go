package kube

import (
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections on a loopback port to one target, and can
// be stopped to cut every client behind it off at once: a network partition
// between one process and the apiserver, on one machine.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	// down is held for writing while the answers are paused; each write
	// towards a client holds it for reading.
	down sync.RWMutex
}

// StartProxy listens on 127.0.0.1 and forwards to target (host:port).
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Stop closes the listener and every open connection, and waits for the
// forwarding goroutines. Safe to call twice.
func (p *Proxy) Stop() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		_ = p.ln.Close()
		for c := range p.conns {
			_ = c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// PauseAnswers holds every byte from the target to the clients (answers and
// watch events) until ResumeAnswers, while requests still flow to the
// target: the client's view of the cluster freezes while its writes land.
func (p *Proxy) PauseAnswers() { p.down.Lock() }

// ResumeAnswers releases what PauseAnswers held, in order.
func (p *Proxy) ResumeAnswers() { p.down.Unlock() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		p.wg.Add(2)
		go p.pipe(out, in, nil)
		go p.pipe(in, out, &p.down)
	}
}

// track registers both ends, or closes them when the proxy is stopping.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// pipe copies src to dst; with gate, each write waits while it is paused.
func (p *Proxy) pipe(dst, src net.Conn, gate *sync.RWMutex) {
	defer p.wg.Done()
	defer func() { _ = dst.Close(); _ = src.Close() }()
	if gate == nil {
		_, _ = io.Copy(dst, src)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			gate.RLock()
			_, werr := dst.Write(buf[:n])
			gate.RUnlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
