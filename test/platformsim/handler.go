package platformsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// reply is an answer decided before anything is written, so a fault can
// rewrite it and the journal can record it first.
type reply struct {
	status  int
	header  http.Header
	body    []byte
	trickle time.Duration
}

// ServeHTTP routes, answers and records one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{
		Time:   s.opts.Now(),
		Method: r.Method,
		Path:   r.URL.EscapedPath(),
		Header: r.Header.Clone(),
		Token:  bearer(r.Header.Get("Authorization")),
	}
	ep, id, ok := s.route(rec.Path)
	rec.Endpoint, rec.ClusterID = ep, id
	if !ok {
		rec.Status = http.StatusNotFound
		defer s.ended(s.keep(rec))
		write(w, r, s.closing, errorReply(http.StatusNotFound, "not found", "no such endpoint or cluster"))
		return
	}
	fault, faulted := s.takeFault(ep)
	rec.Faulted = faulted
	if faulted && fault.Hang {
		s.hang(r, &rec)
		return
	}
	var answer reply
	switch ep {
	case EndpointHeartbeat:
		answer = s.heartbeat(r, &rec)
	case EndpointRegister:
		answer = s.register(r, &rec)
	default:
		answer = s.desired(r, &rec)
	}
	if faulted {
		answer = fault.apply(ep, answer)
	}
	rec.Status = answer.status
	rec.accepted = rec.accepted && answer.status/100 == 2
	// Deferred: an aborted answer ends by panicking.
	defer s.ended(s.keep(rec))
	write(w, r, s.closing, answer)
}

// route splits "<prefix>/api/clusters/<escaped id>/<endpoint>". Only the
// configured cluster is known: the platform binds a token to one cluster.
// "<prefix>/api/clusters/agent-register" names its cluster in the body.
func (s *Server) route(escapedPath string) (Endpoint, string, bool) {
	rest, ok := strings.CutPrefix(escapedPath, s.opts.PathPrefix+"/api/clusters/")
	if !ok {
		return "", "", false
	}
	if rest == string(EndpointRegister) {
		return EndpointRegister, "", true
	}
	segment, name, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	id, err := url.PathUnescape(segment)
	if err != nil {
		return "", "", false
	}
	ep := Endpoint(name)
	if ep != EndpointHeartbeat && ep != EndpointDesired {
		return "", id, false
	}
	return ep, id, id == s.opts.ClusterID
}

func bearer(header string) string {
	token, _ := strings.CutPrefix(header, "Bearer ")
	if token == header {
		return ""
	}
	return token
}

// gate answers the checks both endpoints share; ok means go on.
func (s *Server) gate(r *http.Request, method, token string) (reply, bool) {
	if r.Method != method {
		rep := errorReply(http.StatusMethodNotAllowed, "method not allowed", "use "+method)
		rep.header.Set("Allow", method)
		return rep, false
	}
	s.mu.Lock()
	known := token != "" && (slices.Contains(s.tokens, token) || s.registered(token))
	s.mu.Unlock()
	if !known {
		rep := errorReply(http.StatusUnauthorized, "unauthorized", "missing or unknown bearer token")
		rep.header.Set("WWW-Authenticate", "Bearer")
		return rep, false
	}
	return reply{}, true
}

// desired serves the desired-state document, honouring If-None-Match with a
// byte-for-byte comparison because the ETag is opaque to both sides.
func (s *Server) desired(r *http.Request, rec *Request) reply {
	if rep, ok := s.gate(r, http.MethodGet, rec.Token); !ok {
		return rep
	}
	s.mu.Lock()
	doc, etag := s.desiredDoc, s.etag
	s.mu.Unlock()
	rep := reply{status: http.StatusOK, header: http.Header{}, body: doc}
	if etag != "" {
		rep.header.Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			rep.status, rep.body = http.StatusNotModified, nil
			return rep
		}
	}
	rep.header.Set("Content-Type", "application/json")
	return rep
}

func errorReply(status int, message, detail string) reply {
	return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: jsonError(message, detail)}
}

func jsonError(message, detail string) []byte {
	b, _ := json.Marshal(map[string]string{"error": message, "detail": detail})
	return b
}
