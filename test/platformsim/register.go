package platformsim

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
)

// The registration endpoint's body, as this project names its fields (the
// platform publishes none): the cluster, the SHA-256 of the agent token and
// of the claim code (64 lowercase hex digits each), and an optional
// one-time bind secret.
const (
	fieldClusterID  = "clusterId"
	fieldTokenHash  = "agentTokenSha256"
	fieldClaimHash  = "claimCodeSha256"
	fieldBindSecret = "bindSecret"

	// maxRegisterBytes: a registration is four short strings.
	maxRegisterBytes = 16 << 10
	maxBindBytes     = 1024
)

var (
	clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$`)
	sha256Pattern    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Registration is one accepted agent-register body.
type Registration struct {
	ClusterID       string
	TokenSHA256     string
	ClaimCodeSHA256 string
	BindSecret      string
}

// DecodeRegistration reads an agent-register body from decoded JSON, as the
// heartbeat validator does, never from the agent's Go types. Unknown keys
// are ignored; every problem is an Issue.
func DecodeRegistration(body []byte) (Registration, []Issue, error) {
	doc, err := decodeObject(body)
	if err != nil {
		return Registration{}, nil, err
	}
	var issues []Issue
	str := func(key string, required bool, ok func(string) bool, want string) string {
		v, present := doc[key]
		if !present && !required {
			return ""
		}
		s, isString := v.(string)
		if !isString || !ok(s) {
			issues = append(issues, Issue{Path: key, Message: want})
			return ""
		}
		return s
	}
	reg := Registration{
		ClusterID:       str(fieldClusterID, true, clusterIDPattern.MatchString, "a cluster id: 1-253 letters, digits, '.', '_' or '-'"),
		TokenSHA256:     str(fieldTokenHash, true, sha256Pattern.MatchString, "64 lowercase hex digits"),
		ClaimCodeSHA256: str(fieldClaimHash, true, sha256Pattern.MatchString, "64 lowercase hex digits"),
		BindSecret:      str(fieldBindSecret, false, func(s string) bool { return s != "" && len(s) <= maxBindBytes }, "1-1024 bytes"),
	}
	if reg.TokenSHA256 != "" && reg.TokenSHA256 == reg.ClaimCodeSHA256 {
		issues = append(issues, Issue{Path: fieldClaimHash, Message: "must differ from " + fieldTokenHash})
	}
	return reg, issues, nil
}

// register answers POST /api/clusters/agent-register: 201 for a new
// registration, 200 for the same hashes again (a re-run, or a retry whose
// answer was lost), 409 for different hashes on a registered cluster.
func (s *Server) register(r *http.Request, rec *Request) reply {
	if r.Method != http.MethodPost {
		rep := errorReply(http.StatusMethodNotAllowed, "method not allowed", "use POST")
		rep.header.Set("Allow", http.MethodPost)
		return rep
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return errorReply(http.StatusUnsupportedMediaType, "unsupported media type", "send Content-Type: application/json")
	}
	body, tooLarge, err := s.readBody(r)
	switch {
	case err != nil:
		return errorReply(http.StatusBadRequest, "unreadable body", err.Error())
	case tooLarge || len(body) > maxRegisterBytes:
		return errorReply(http.StatusRequestEntityTooLarge, "body too large", fmt.Sprintf("limit is %d bytes", maxRegisterBytes))
	}
	rec.Body = body
	reg, issues, err := DecodeRegistration(body)
	if err != nil {
		return errorReply(http.StatusBadRequest, "body is not a JSON object", err.Error())
	}
	if rec.Issues = issues; len(issues) > 0 {
		b, _ := json.Marshal(map[string]any{"error": "invalid registration", "field": issues[0].Path, "issues": issues})
		return reply{status: http.StatusBadRequest, header: http.Header{"Content-Type": {"application/json"}}, body: b}
	}
	rec.ClusterID = reg.ClusterID
	if reg.ClusterID != s.opts.ClusterID {
		return errorReply(http.StatusNotFound, "not found", "unknown cluster")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := s.opts.BindSecret; want != "" && subtle.ConstantTimeCompare([]byte(reg.BindSecret), []byte(want)) != 1 {
		return errorReply(http.StatusForbidden, "forbidden", "missing or wrong bind secret")
	}
	prev, known := s.registrations[reg.ClusterID]
	switch {
	case known && prev.TokenSHA256 == reg.TokenSHA256 && prev.ClaimCodeSHA256 == reg.ClaimCodeSHA256:
		return jsonReply(http.StatusOK, `{"status":"registered"}`)
	case known:
		return errorReply(http.StatusConflict, "conflict", "cluster already registered with another agent token")
	}
	s.registrations[reg.ClusterID] = reg
	return jsonReply(http.StatusCreated, `{"status":"registered"}`)
}

func jsonReply(status int, body string) reply {
	return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(body)}
}

// Registrations returns the accepted registrations, one per cluster.
func (s *Server) Registrations() []Registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.registrations))
}

// registered reports whether token hashes to a registered agent token:
// the platform stores only the hash, so that is all it can compare.
// Call with s.mu held.
func (s *Server) registered(token string) bool {
	sum := sha256.Sum256([]byte(token))
	h := hex.EncodeToString(sum[:])
	for _, r := range s.registrations {
		if r.TokenSHA256 == h {
			return true
		}
	}
	return false
}
