package platformsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// heartbeat authenticates, reads, decodes and validates one beat.
func (s *Server) heartbeat(r *http.Request, rec *Request) reply {
	if rep, ok := s.gate(r, http.MethodPost, rec.Token); !ok {
		return rep
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return errorReply(http.StatusUnsupportedMediaType, "unsupported media type",
			"send Content-Type: application/json (charset utf-8, if any)")
	}
	body, tooLarge, err := s.readBody(r)
	if err != nil {
		return errorReply(http.StatusBadRequest, "unreadable body", err.Error())
	}
	if tooLarge {
		return errorReply(http.StatusRequestEntityTooLarge, "body too large",
			"limit is "+strconv.FormatInt(s.opts.MaxBodyBytes, 10)+" bytes")
	}
	rec.Body = body
	payload, err := decodeObject(body)
	if err != nil {
		return errorReply(http.StatusBadRequest, "body is not a JSON object", err.Error())
	}
	rec.Payload = payload
	rec.Issues = validateHeartbeat(payload, s.opts.AllowSchema1)
	if len(rec.Issues) > 0 {
		b, _ := json.Marshal(map[string]any{
			"error":  "invalid heartbeat",
			"field":  rec.Issues[0].Path,
			"issues": rec.Issues,
		})
		return reply{status: http.StatusBadRequest, header: http.Header{"Content-Type": {"application/json"}}, body: b}
	}
	rec.accepted = true
	return s.heartbeatOK()
}

// isJSON is the platform's express.json() gate: the media type must be
// application/json, parameters allowed, and a charset, if given, UTF-8. The
// platform answers a body it did not parse with zod's 400; the simulator
// says 415 instead, so a test sees that the header, not the payload, is
// wrong. Either way nothing is stored. (body-parser would also decode UTF-16
// and UTF-32; no agent sends them, so here they are 415 too.)
func isJSON(contentType string) bool {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil || media != "application/json" {
		return false
	}
	charset, ok := params["charset"]
	return !ok || strings.EqualFold(charset, "utf-8")
}

func (s *Server) heartbeatOK() reply {
	s.mu.Lock()
	updates := s.updates
	s.mu.Unlock()
	answer := map[string]any{"status": "ok"}
	if updates != nil {
		answer["availableUpdates"] = updates
	}
	b, _ := json.Marshal(answer)
	return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: b}
}

// readBody reads at most MaxBodyBytes; one byte more means the body is too
// large, and the rest is left for net/http to discard.
func (s *Server) readBody(r *http.Request) (body []byte, tooLarge bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > s.opts.MaxBodyBytes {
		return nil, true, nil
	}
	return body, false, nil
}

// decodeObject parses like JSON.parse followed by an object check: exactly
// one value, numbers kept exact so integer rules judge what was sent.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("expected a JSON object, got " + typeName(v))
	}
	return obj, nil
}

// hang holds a request until its client leaves or the server closes, then
// drops the connection without an answer. The body is drained first because
// net/http only notices a departed client once the body has been read.
func (s *Server) hang(r *http.Request, rec *Request) {
	rec.Body, _, _ = s.readBody(r)
	defer s.ended(s.keep(*rec)) // Status 0: never answered
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
	panic(http.ErrAbortHandler)
}

// write sends rep, one byte per interval when it trickles.
func write(w http.ResponseWriter, r *http.Request, closing <-chan struct{}, rep reply) {
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	body := rep.body
	if !bodyAllowed(rep.status) {
		body = nil
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(rep.status)
	if rep.trickle <= 0 || len(body) == 0 {
		_, _ = w.Write(body)
		return
	}
	rc := http.NewResponseController(w)
	tick := time.NewTicker(rep.trickle)
	defer tick.Stop()
	for i := range body {
		if _, err := w.Write(body[i : i+1]); err != nil {
			return
		}
		if rc.Flush() != nil || i == len(body)-1 {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-closing:
			// A short body that looks complete would lie to the client.
			panic(http.ErrAbortHandler)
		}
	}
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
