// Package register bootstraps a cluster's identity without lok8s: it makes
// the agent token and claim code locally, keeps them in the identity Secret
// (created once, never rotated) and announces only their SHA-256 hashes to
// the platform, so neither secret ever crosses the network.
package register

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/token"
)

// Keys of the identity Secret: the observer and actor read TokenKey; a human
// reads ClaimKey once, to claim the cluster on the platform.
const (
	TokenKey = token.SecretKey
	ClaimKey = "claim-code"
)

const (
	// ClaimPrefix starts every claim code; 32 lowercase hex digits follow
	// (128 random bits: unguessable, and short enough to paste).
	ClaimPrefix = "khzc_"
	claimBytes  = 16
	tokenBytes  = 32 // the token format's 64 hex digits
)

// Identity is one agent token and its claim code. Every way of printing
// either value redacts it.
type Identity struct {
	Token token.Token
	Claim Claim
}

// Claim is a claim code; like token.Token it redacts itself when printed.
type Claim string

func (c Claim) String() string               { return ClaimPrefix + "***redacted***" }
func (c Claim) GoString() string             { return c.String() }
func (c Claim) Format(f fmt.State, _ rune)   { _, _ = f.Write([]byte(c.String())) }
func (c Claim) LogValue() slog.Value         { return slog.StringValue(c.String()) }
func (c Claim) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Generate draws a new identity from random, which must be a secure source
// (crypto/rand.Reader outside tests).
func Generate(random io.Reader) (Identity, error) {
	buf := make([]byte, tokenBytes+claimBytes)
	if _, err := io.ReadFull(random, buf); err != nil {
		return Identity{}, fmt.Errorf("read random bytes: %w", err)
	}
	return Identity{
		Token: token.Token(token.Prefix + hex.EncodeToString(buf[:tokenBytes])),
		Claim: Claim(ClaimPrefix + hex.EncodeToString(buf[tokenBytes:])),
	}, nil
}

// Hashes are the lowercase hex SHA-256 of the token's and the claim code's
// exact text, the only form in which they leave the cluster.
func (id Identity) Hashes() (tokenHash, claimHash string) {
	return sha256Hex(id.Token.Reveal()), sha256Hex(string(id.Claim))
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// FromSecret reads an identity that already exists (made by an earlier run
// or by lok8s). Values are trimmed, as the observer trims the token. The
// errors name what is wrong, never a value.
func FromSecret(s *kubeapi.Secret) (Identity, error) {
	tok := strings.TrimSpace(string(s.Data[TokenKey]))
	if err := token.Validate(tok); err != nil {
		return Identity{}, fmt.Errorf("key %s: %w", TokenKey, err)
	}
	claim := strings.TrimSpace(string(s.Data[ClaimKey]))
	if err := validateClaim(claim); err != nil {
		return Identity{}, fmt.Errorf("key %s: %w", ClaimKey, err)
	}
	return Identity{Token: token.Token(tok), Claim: Claim(claim)}, nil
}

// validateClaim accepts any claim code with the prefix and plain visible
// characters after it: one lok8s made may not follow this package's length.
func validateClaim(s string) error {
	rest, ok := strings.CutPrefix(s, ClaimPrefix)
	if !ok || rest == "" {
		return fmt.Errorf("not a claim code (want %s followed by the code)", ClaimPrefix)
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] <= ' ' || rest[i] > '~' {
			return fmt.Errorf("claim code character %d is not a visible ASCII character", len(ClaimPrefix)+i+1)
		}
	}
	return nil
}

// labels mark the Secret as the register command's. It carries no
// app.kubernetes.io/instance label on purpose: uninstalling the agent by
// that label must not destroy the identity the platform knows.
func labels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "kubehz-register",
		"app.kubernetes.io/component":  "register",
		"app.kubernetes.io/part-of":    "kubehz",
		"app.kubernetes.io/managed-by": "kubehz-register",
	}
}

// NewSecret is the identity Secret to create. It is immutable: the
// identity is never rotated in place, and the apiserver then refuses any
// update, whoever asks.
func NewSecret(namespace, name string, id Identity) *kubeapi.Secret {
	immutable := true
	return &kubeapi.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels()},
		Type:       kubeapi.SecretTypeOpaque,
		Immutable:  &immutable,
		Data: map[string][]byte{
			TokenKey: []byte(id.Token.Reveal()),
			ClaimKey: []byte(id.Claim),
		},
	}
}
