package platformsim

import (
	"net/http"
	"strconv"
	"time"
)

// Endpoint names one of the platform endpoints.
type Endpoint string

// The endpoints. A Fault with the zero Endpoint applies to all of them.
const (
	EndpointAny       Endpoint = ""
	EndpointHeartbeat Endpoint = "heartbeat"
	EndpointDesired   Endpoint = "desired"
	EndpointRegister  Endpoint = "agent-register"
)

// Fault changes how the simulator answers. Fields combine: Status replaces
// the normal answer, Body and OversizeBytes replace the body, Trickle slows
// whatever is sent, Hang sends nothing at all.
//
// A faulted request is still authenticated, decoded and validated, so the
// journal shows what the agent sent while the platform misbehaved; only an
// answer that ends up 2xx with a valid beat counts as an accepted beat.
type Fault struct {
	Endpoint Endpoint // EndpointAny: every endpoint
	// Count is how many matching requests the fault answers before it clears
	// itself; 0 keeps it until ClearFault or the next SetFault for the endpoint.
	Count int
	// Status replaces the normal status (401, 403, 429, 500, 503, a 3xx …);
	// 0 keeps the normal one.
	Status int
	// RetryAfter is sent verbatim as Retry-After: delay seconds ("3") or an
	// HTTP date (see RetryAfterAt).
	RetryAfter string
	// Location is sent as the Location header, for redirect statuses.
	Location string
	// Body replaces the answer body verbatim (a null, a legacy shape, not JSON).
	Body []byte
	// OversizeBytes replaces the answer body with at least this many bytes of
	// well-formed JSON shaped like the endpoint's real answer.
	OversizeBytes int
	// ContentType replaces the answer's Content-Type header (a proxy's
	// text/html page, say), whatever the body is.
	ContentType string
	// Trickle sends the answer body one byte per interval.
	Trickle time.Duration
	// Hang holds the request without answering until the client gives up or
	// the server closes; the connection is then dropped, never answered.
	Hang bool
}

// RetryAfterAt renders t as an HTTP date for Fault.RetryAfter.
func RetryAfterAt(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// SetFault installs f for its endpoint, replacing any earlier fault there.
// An endpoint-specific fault wins over an EndpointAny one.
func (s *Server) SetFault(f Fault) {
	f.Body = append([]byte(nil), f.Body...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[f.Endpoint] = &f
}

// ClearFault removes every installed fault.
func (s *Server) ClearFault() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

// takeFault returns the fault that answers a request to ep, spending one of
// its Count.
func (s *Server) takeFault(ep Endpoint) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ep
	f, ok := s.faults[key]
	if !ok {
		key = EndpointAny
		if f, ok = s.faults[key]; !ok {
			return Fault{}, false
		}
	}
	if f.Count > 0 {
		f.Count--
		if f.Count == 0 {
			delete(s.faults, key)
		}
	}
	return *f, true
}

// apply turns the normal answer into the faulted one.
func (f Fault) apply(ep Endpoint, normal reply) reply {
	out := normal
	out.header = normal.header.Clone()
	if out.header == nil {
		out.header = http.Header{}
	}
	if f.Status != 0 {
		out.status = f.Status
		out.body = jsonError(http.StatusText(f.Status), "injected fault")
	}
	if f.RetryAfter != "" {
		out.header.Set("Retry-After", f.RetryAfter)
	}
	if f.Location != "" {
		out.header.Set("Location", f.Location)
	}
	if f.Body != nil {
		out.body = f.Body
	}
	if f.OversizeBytes > 0 {
		out.body = oversize(ep, f.OversizeBytes)
		out.header.Set("Content-Type", "application/json")
	}
	if f.ContentType != "" {
		out.header.Set("Content-Type", f.ContentType)
	}
	out.trickle = f.Trickle
	return out
}

// oversize builds a body that parses like the endpoint's real answer, so a
// client that trusts the parser instead of a read limit gets caught.
func oversize(ep Endpoint, size int) []byte {
	head, tail := `{"status":"ok","availableUpdates":[`, `]}`
	open, rest := `{"name":"addon-`, `","current":"1.0.0","latest":"1.0.1"}`
	if ep == EndpointDesired {
		// It authorizes scaling every pool it names: a client that acted on
		// a document past the read limit would be caught scaling pool-0.
		head = `{"revision":1000,"kubernetesVersion":null,"workerPools":[`
		tail = `],"execution":{"scaling":true,"upgrades":false,"healing":false}}`
		open, rest = `{"name":"pool-`, `","machineType":"cpx31","desiredReplicas":9}`
	}
	b := make([]byte, 0, size+128)
	b = append(b, head...)
	for i := 0; len(b)+len(tail) < size; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, open...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, rest...)
	}
	return append(b, tail...)
}
