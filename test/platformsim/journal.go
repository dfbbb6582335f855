package platformsim

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is one request as the simulator saw and answered it.
type Request struct {
	Seq       uint64 // arrival order across both endpoints, from 1
	Time      time.Time
	Method    string
	Path      string   // escaped, as sent
	Endpoint  Endpoint // "" when the path named no endpoint
	ClusterID string   // the unescaped path segment
	Token     string   // the bearer token carried, "" when none
	Header    http.Header
	Status    int  // answered status; 0 for a request held by a Hang fault
	Faulted   bool // a Fault shaped the answer
	Body      []byte
	// Payload is the decoded heartbeat, numbers as json.Number; nil unless
	// the body was a JSON object.
	Payload map[string]any
	Issues  []Issue // why a heartbeat was refused with 400
	// Ended is when the simulator was done with the request: its answer
	// written in full, or its client gone, or the simulator closed. Zero
	// while the request is still being answered or held.
	Ended time.Time

	accepted bool
}

// Beat is a heartbeat the simulator accepted: 2xx and valid.
type Beat = Request

// Lookup finds a value in the payload by a dotted path with numeric array
// indices, the same form Issue.Path uses: "agent.mode", "nodes.0.name".
func (r Request) Lookup(path string) (any, bool) {
	var v any = r.Payload
	if r.Payload == nil {
		return nil, false
	}
	for key := range strings.SplitSeq(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// journal keeps the newest records of every request and of accepted beats,
// and wakes waiters on each addition.
type journal struct {
	limit   int
	closing <-chan struct{}

	mu       sync.Mutex
	seq      uint64
	requests []Request
	beats    []Request
	changed  chan struct{} // closed and replaced on every addition
}

func newJournal(limit int, closing <-chan struct{}) *journal {
	return &journal{limit: limit, closing: closing, changed: make(chan struct{})}
}

// keep records rec and hands it to the OnRequest hook; it returns the
// sequence number that names the record.
func (s *Server) keep(rec Request) uint64 {
	rec = s.journal.add(rec)
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(rec)
	}
	return rec.Seq
}

// ended stamps the record seq names with the time the simulator was done
// with it.
func (s *Server) ended(seq uint64) {
	at := s.opts.Now()
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, list := range [][]Request{j.requests, j.beats} {
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].Seq == seq {
				list[i].Ended = at
				break
			}
		}
	}
}

func (j *journal) add(rec Request) Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	rec.Seq = j.seq
	j.requests = appendBounded(j.requests, rec, j.limit)
	if rec.accepted {
		j.beats = appendBounded(j.beats, rec, j.limit)
	}
	close(j.changed)
	j.changed = make(chan struct{})
	return rec
}

// appendBounded drops from the front so the slice never exceeds limit; the
// copy keeps dropped records from pinning the old backing array.
func appendBounded(list []Request, rec Request, limit int) []Request {
	if len(list) >= limit {
		list = append(list[:0:0], list[len(list)-limit+1:]...)
	}
	return append(list, rec)
}

// Requests returns the kept records of every request, oldest first.
func (s *Server) Requests() []Request {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return append([]Request(nil), s.journal.requests...)
}

// Beats returns the kept accepted heartbeats, oldest first.
func (s *Server) Beats() []Beat {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return append([]Beat(nil), s.journal.beats...)
}

// Seq is the sequence number of the newest request so far; a test that wants
// only later requests matches on Seq greater than it.
func (s *Server) Seq() uint64 {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return s.journal.seq
}

// ResetRecords forgets every kept record; sequence numbers keep counting.
func (s *Server) ResetRecords() {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	s.journal.requests, s.journal.beats = nil, nil
}

// WaitRequest returns the oldest kept or future request that match accepts.
func (s *Server) WaitRequest(ctx context.Context, match func(Request) bool) (Request, error) {
	return s.journal.wait(ctx, func(j *journal) []Request { return j.requests }, match)
}

// WaitBeat returns the oldest kept or future accepted beat that match accepts.
func (s *Server) WaitBeat(ctx context.Context, match func(Beat) bool) (Beat, error) {
	return s.journal.wait(ctx, func(j *journal) []Request { return j.beats }, match)
}

func (j *journal) wait(ctx context.Context, list func(*journal) []Request, match func(Request) bool) (Request, error) {
	var seen uint64
	for {
		j.mu.Lock()
		var fresh []Request
		for _, rec := range list(j) {
			if rec.Seq > seen {
				fresh = append(fresh, rec)
			}
		}
		seen = j.seq
		changed := j.changed
		j.mu.Unlock()
		for _, rec := range fresh {
			if match == nil || match(rec) {
				return rec, nil
			}
		}
		select {
		case <-ctx.Done():
			return Request{}, ctx.Err()
		case <-j.closing:
			return Request{}, ErrClosed
		case <-changed:
		}
	}
}

// Issue is one reason a heartbeat was refused, named by its JSON path.
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Number reads a json.Number payload value as an int64, for test assertions.
func Number(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}
