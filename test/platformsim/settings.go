package platformsim

import (
	"encoding/json"
	"fmt"
)

// AvailableUpdate is one entry of the heartbeat reply's addon verdict.
type AvailableUpdate struct {
	Name    string `json:"name"`
	Current string `json:"current,omitempty"`
	Latest  string `json:"latest,omitempty"`
}

// SetTokens replaces the accepted bearer tokens; several at once model a
// rotation overlap. With none, every request is unauthorized.
func (s *Server) SetTokens(accepted ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = append([]string(nil), accepted...)
}

// SetAvailableUpdates sets the heartbeat reply's verdict: nil leaves the key
// out (no verdict), an empty non-nil slice sends [] (nothing newer).
func (s *Server) SetAvailableUpdates(updates []AvailableUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if updates == nil {
		s.updates = nil
		return
	}
	s.updates = append([]AvailableUpdate{}, updates...)
}

// SetDesired sets the desired-state document and its ETag. A []byte or
// json.RawMessage is served verbatim, so a test can serve broken JSON; any
// other value is marshalled. An empty etag sends no ETag header.
func (s *Server) SetDesired(doc any, etag string) error {
	var body []byte
	switch d := doc.(type) {
	case []byte:
		body = append([]byte(nil), d...)
	case json.RawMessage:
		body = append([]byte(nil), d...)
	default:
		b, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("marshal desired document: %w", err)
		}
		body = b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.desiredDoc, s.etag = body, etag
	return nil
}
