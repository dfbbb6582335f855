package register

import (
	"fmt"
	"strings"

	"kubehz.dev/agent/shared/kubeapi"
)

// Request is the body of POST /api/clusters/agent-register. The platform
// publishes no field names for it; these are this project's, documented in
// the README, and this struct is the only place the agent spells them.
type Request struct {
	ClusterID        string `json:"clusterId"`
	AgentTokenSHA256 string `json:"agentTokenSha256"`
	ClaimCodeSHA256  string `json:"claimCodeSha256"`
	// BindSecret is the one-time secret from the kubehz-agent-bind Secret,
	// when there is one; it proves the cluster was meant to be bound.
	BindSecret string `json:"bindSecret,omitempty"`
}

// NewRequest announces id's hashes for clusterID; bind may be "".
func NewRequest(clusterID string, id Identity, bind string) Request {
	tokenHash, claimHash := id.Hashes()
	return Request{ClusterID: clusterID, AgentTokenSHA256: tokenHash, ClaimCodeSHA256: claimHash, BindSecret: bind}
}

// The bind Secret: made by whoever prepared the cluster's registration on
// the platform side, read once here.
const (
	BindSecretName = "kubehz-agent-bind"
	BindKey        = "bind-secret"
	// maxBindBytes is far above any generated secret and keeps a mistaken
	// Secret (a whole kubeconfig, say) out of the request.
	maxBindBytes = 1024
)

// BindFromSecret reads the one-time bind secret, trimmed. Errors name what
// is wrong, never the value.
func BindFromSecret(s *kubeapi.Secret) (string, error) {
	v := strings.TrimSpace(string(s.Data[BindKey]))
	switch {
	case v == "":
		return "", fmt.Errorf("no value under key %s in Secret %s/%s", BindKey, s.Namespace, s.Name)
	case len(v) > maxBindBytes:
		return "", fmt.Errorf("key %s in Secret %s/%s is longer than %d bytes", BindKey, s.Namespace, s.Name, maxBindBytes)
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return "", fmt.Errorf("key %s in Secret %s/%s: character %d is not a visible ASCII character", BindKey, s.Namespace, s.Name, i+1)
		}
	}
	return v, nil
}

// HowToRead is the kubectl line that prints the claim code. The namespace
// and name are validated DNS names, so they need no shell quoting.
func HowToRead(namespace, name string) string {
	return fmt.Sprintf("kubectl -n %s get secret %s -o jsonpath='{.data.%s}' | base64 -d", namespace, name, ClaimKey)
}
