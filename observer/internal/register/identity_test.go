package register

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/token"
)

func TestGenerate_MakesTheContractFormatsFromTheRandomSource(t *testing.T) {
	id, err := Generate(fixedRandom())
	if err != nil {
		t.Fatal(err)
	}
	if id.Token.Reveal() != fixedToken || string(id.Claim) != fixedClaim {
		t.Errorf("got token %q claim %q", id.Token.Reveal(), string(id.Claim))
	}
	if err := token.Validate(id.Token.Reveal()); err != nil {
		t.Errorf("generated token fails the observer's validation: %v", err)
	}
	tokenHash, claimHash := id.Hashes()
	if tokenHash != fixedTokenHash || claimHash != fixedClaimHash {
		t.Errorf("hashes %s %s", tokenHash, claimHash)
	}
}

func TestGenerate_FailsOnAShortRandomSource(t *testing.T) {
	if _, err := Generate(bytes.NewReader(make([]byte, 47))); err == nil {
		t.Error("47 random bytes made an identity; it needs 48")
	}
	if _, err := Generate(iotest.ErrReader(fmt.Errorf("no entropy"))); err == nil {
		t.Error("a failing random source made an identity")
	}
}

func TestIdentity_EveryPrintingRedactsBothValues(t *testing.T) {
	id := Identity{Token: fixedToken, Claim: fixedClaim}
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&out, verb+"\n", id)
		fmt.Fprintf(&out, verb+"\n", id.Claim)
	}
	b, _ := json.Marshal(id)
	out.Write(b)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("x", "id", id, "claim", id.Claim)
	if strings.Contains(out.String(), fixedToken[8:]) || strings.Contains(out.String(), fixedClaim[5:]) {
		t.Errorf("a secret was printed:\n%s", out.String())
	}
}

func TestFromSecret_TrimsAndRefusesWhatIsNotAnIdentity(t *testing.T) {
	tests := []struct {
		name         string
		token, claim string
		wantErr      string
	}{
		{name: "trailing newlines trimmed", token: fixedToken + "\n", claim: fixedClaim + "\n"},
		{name: "a longer lok8s claim code", token: fixedToken, claim: "khzc_ABCdef-123_xyz"},
		{name: "no token", claim: fixedClaim, wantErr: "agent-token"},
		{name: "claim code as token", token: fixedClaim, claim: fixedClaim, wantErr: "agent-token"},
		{name: "no claim code", token: fixedToken, wantErr: "claim-code"},
		{name: "bare prefix", token: fixedToken, claim: "khzc_", wantErr: "claim-code"},
		{name: "token as claim code", token: fixedToken, claim: fixedToken, wantErr: "claim-code"},
		{name: "space inside claim code", token: fixedToken, claim: "khzc_ab cd", wantErr: "character 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string][]byte{}
			if tt.token != "" {
				data["agent-token"] = []byte(tt.token)
			}
			if tt.claim != "" {
				data["claim-code"] = []byte(tt.claim)
			}
			id, err := FromSecret(&kubeapi.Secret{Data: data})
			if tt.wantErr == "" {
				if err != nil || id.Token.Reveal() != strings.TrimSpace(tt.token) || string(id.Claim) != strings.TrimSpace(tt.claim) {
					t.Fatalf("got %v, %v", id, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), fixedToken[8:]) || strings.Contains(err.Error(), fixedClaim[5:]) {
				t.Errorf("error quotes a secret: %v", err)
			}
		})
	}
}

func TestNewSecret_IsImmutableWithTheKeysTheObserverReads(t *testing.T) {
	s := NewSecret("kubehz-system", "kubehz-agent", Identity{Token: fixedToken, Claim: fixedClaim})
	if s.Immutable == nil || !*s.Immutable {
		t.Error("the identity Secret is mutable")
	}
	if string(s.Data["agent-token"]) != fixedToken || string(s.Data["claim-code"]) != fixedClaim || len(s.Data) != 2 {
		t.Errorf("data keys %v", s.Data)
	}
	if _, ok := s.Labels["app.kubernetes.io/instance"]; ok {
		t.Error("the identity Secret carries the instance label, so uninstall would delete it")
	}
}

func FuzzFromSecret_NeverPanicsNorQuotesTheValue(f *testing.F) {
	f.Add([]byte(fixedToken), []byte(fixedClaim), []byte("bind"))
	f.Add([]byte("khz_agt_"), []byte("khzc_\x00"), []byte(" \n"))
	f.Fuzz(func(t *testing.T, tok, claim, bind []byte) {
		s := &kubeapi.Secret{Data: map[string][]byte{"agent-token": tok, "claim-code": claim}}
		// The guards keep a value that happens to spell part of a message
		// from counting: no message has 16 bytes without a space, or 100.
		code := bytes.TrimPrefix(claim, []byte("khzc_"))
		if _, err := FromSecret(s); err != nil && len(code) >= 16 && !bytes.ContainsAny(code, " \t\n\r\v\f") &&
			strings.Contains(err.Error(), string(code)) {
			t.Errorf("error quotes the claim code: %v", err)
		}
		if _, err := parseBind(bind, "/bind"); err != nil && len(bind) > 100 && strings.Contains(err.Error(), string(bind)) {
			t.Errorf("error quotes the bind secret: %v", err)
		}
	})
}
