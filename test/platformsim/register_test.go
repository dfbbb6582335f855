package platformsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

const registerPath = "/api/clusters/agent-register"

// A registered identity the tests use: the token and its SHA-256.
const (
	regToken     = "khz_agt_1111111111111111111111111111111111111111111111111111111111111111"
	regClaimHash = "2222222222222222222222222222222222222222222222222222222222222222"
)

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func registration(tokenHash, claimHash, bind string) map[string]any {
	m := map[string]any{"clusterId": DefaultClusterID, "agentTokenSha256": tokenHash, "claimCodeSha256": claimHash}
	if bind != "" {
		m["bindSecret"] = bind
	}
	return m
}

func (h *harness) register(body map[string]any) answer {
	h.t.Helper()
	return h.must(http.MethodPost, registerPath, "", marshal(h.t, body), nil)
}

func TestRegister_FirstIsCreatedSameAgainIsOKOtherHashesConflict(t *testing.T) {
	h := start(t, Options{})
	tokenHash := hashOf(regToken)
	steps := []struct {
		name string
		body map[string]any
		want int
	}{
		{"first registration", registration(tokenHash, regClaimHash, ""), http.StatusCreated},
		{"same hashes again", registration(tokenHash, regClaimHash, ""), http.StatusOK},
		{"another token", registration(hashOf("other"), regClaimHash, ""), http.StatusConflict},
		{"another claim code", registration(tokenHash, hashOf("other"), ""), http.StatusConflict},
	}
	for _, s := range steps {
		if got := h.register(s.body); got.status != s.want {
			t.Errorf("%s: status %d, want %d (%s)", s.name, got.status, s.want, got.body)
		}
	}
	regs := h.sim.Registrations()
	if len(regs) != 1 || regs[0].TokenSHA256 != tokenHash || regs[0].ClaimCodeSHA256 != regClaimHash {
		t.Errorf("registrations %+v", regs)
	}
	var journaled int
	for _, r := range h.sim.Requests() {
		if r.Endpoint == EndpointRegister {
			journaled++
		}
	}
	if journaled != 4 || len(h.sim.Beats()) != 0 {
		t.Errorf("journal holds %d registrations and %d beats, want 4 and 0", journaled, len(h.sim.Beats()))
	}
}

func TestRegister_RefusesMalformedBodies(t *testing.T) {
	h := start(t, Options{})
	good := hashOf(regToken)
	tests := []struct {
		name  string
		body  string
		want  int
		field string
	}{
		{"not JSON", `{`, http.StatusBadRequest, ""},
		{"not an object", `[]`, http.StatusBadRequest, ""},
		{"no cluster", `{"agentTokenSha256":"` + good + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusBadRequest, "clusterId"},
		{"cluster with a slash", `{"clusterId":"a/b","agentTokenSha256":"` + good + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusBadRequest, "clusterId"},
		{"uppercase hash", `{"clusterId":"demo.example.net","agentTokenSha256":"` + strings.ToUpper(good) + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusBadRequest, "agentTokenSha256"},
		{"short hash", `{"clusterId":"demo.example.net","agentTokenSha256":"` + good[:63] + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusBadRequest, "agentTokenSha256"},
		{"the token itself", `{"clusterId":"demo.example.net","agentTokenSha256":"` + regToken + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusBadRequest, "agentTokenSha256"},
		{"hash as number", `{"clusterId":"demo.example.net","agentTokenSha256":"` + good + `","claimCodeSha256":7}`, http.StatusBadRequest, "claimCodeSha256"},
		{"same hash twice", `{"clusterId":"demo.example.net","agentTokenSha256":"` + good + `","claimCodeSha256":"` + good + `"}`, http.StatusBadRequest, "claimCodeSha256"},
		{"empty bind secret", `{"clusterId":"demo.example.net","agentTokenSha256":"` + good + `","claimCodeSha256":"` + regClaimHash + `","bindSecret":""}`, http.StatusBadRequest, "bindSecret"},
		{"unknown cluster", `{"clusterId":"other.example.net","agentTokenSha256":"` + good + `","claimCodeSha256":"` + regClaimHash + `"}`, http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.must(http.MethodPost, registerPath, "", []byte(tt.body), nil)
			if got.status != tt.want {
				t.Fatalf("status %d, want %d (%s)", got.status, tt.want, got.body)
			}
			if tt.field != "" {
				var reply struct{ Field string }
				_ = json.Unmarshal(got.body, &reply)
				if reply.Field != tt.field {
					t.Errorf("refusal names %q, want %q", reply.Field, tt.field)
				}
			}
		})
	}
	if got := h.must(http.MethodGet, registerPath, "", nil, nil); got.status != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d", got.status)
	}
	if got := h.must(http.MethodPost, registerPath, "", marshal(t, registration(good, regClaimHash, "")),
		http.Header{"Content-Type": {"text/plain"}}); got.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: status %d", got.status)
	}
	if len(h.sim.Registrations()) != 0 {
		t.Errorf("a refused body was registered")
	}
}

func TestRegister_ChecksTheBindSecretWhenConfigured(t *testing.T) {
	h := start(t, Options{BindSecret: "one-time-123"})
	tokenHash := hashOf(regToken)
	for _, tt := range []struct {
		name, bind string
		want       int
	}{
		{"none", "", http.StatusForbidden},
		{"wrong", "one-time-124", http.StatusForbidden},
		{"right", "one-time-123", http.StatusCreated},
		{"right again", "one-time-123", http.StatusOK},
	} {
		if got := h.register(registration(tokenHash, regClaimHash, tt.bind)); got.status != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got.status, tt.want)
		}
	}
}

func TestHeartbeat_AcceptsATokenOnlyOnceItsHashIsRegistered(t *testing.T) {
	h := start(t, Options{})
	post := func() int {
		return h.must(http.MethodPost, beatPath, regToken, marshal(t, validBeat()), nil).status
	}
	if got := post(); got != http.StatusUnauthorized {
		t.Fatalf("unregistered token: status %d, want 401", got)
	}
	h.register(registration(hashOf(regToken), regClaimHash, ""))
	if got := post(); got != http.StatusOK {
		t.Fatalf("registered token: status %d, want 200", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := h.sim.WaitBeat(ctx, func(b Beat) bool { return b.Token == regToken })
	if err != nil || b.Status != http.StatusOK {
		t.Errorf("beat with the registered token: %+v, %v", b, err)
	}
	// The configured token still works alongside.
	if got := h.beat(validBeat()); got.status != http.StatusOK {
		t.Errorf("configured token: status %d", got.status)
	}
}

func TestRegister_FaultsApplyLikeOnOtherEndpoints(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetFault(Fault{Endpoint: EndpointRegister, Status: http.StatusServiceUnavailable, Count: 1})
	body := registration(hashOf(regToken), regClaimHash, "")
	if got := h.register(body); got.status != http.StatusServiceUnavailable {
		t.Fatalf("faulted: status %d", got.status)
	}
	if got := h.register(body); got.status != http.StatusOK && got.status != http.StatusCreated {
		t.Errorf("after the fault: status %d", got.status)
	}
}

func FuzzDecodeRegistration(f *testing.F) {
	good := hashOf(regToken)
	f.Add([]byte(`{"clusterId":"demo.example.net","agentTokenSha256":"` + good + `","claimCodeSha256":"` + regClaimHash + `","bindSecret":"x"}`))
	f.Add([]byte(`{"clusterId":7}`))
	f.Add([]byte(`{"clusterId":"a","clusterId":"b"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		reg, issues, err := DecodeRegistration(body)
		if err != nil || len(issues) > 0 {
			return
		}
		// Whatever is accepted is well formed, and survives a round trip.
		if !clusterIDPattern.MatchString(reg.ClusterID) || !sha256Pattern.MatchString(reg.TokenSHA256) ||
			!sha256Pattern.MatchString(reg.ClaimCodeSHA256) || len(reg.BindSecret) > maxBindBytes {
			t.Fatalf("accepted %+v", reg)
		}
		again, issues, err := DecodeRegistration(marshal(t, registration(reg.TokenSHA256, reg.ClaimCodeSHA256, reg.BindSecret)))
		reg.ClusterID = DefaultClusterID
		if err != nil || len(issues) > 0 || again != reg {
			t.Fatalf("round trip: %+v, %v, %v", again, issues, err)
		}
	})
}
