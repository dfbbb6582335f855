package register

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
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
// the platform side. deploy/register's Job mounts it as an optional volume,
// so this command reads a file and never the Secret through the API: the
// register ServiceAccount has no get on it to abuse.
const (
	BindSecretName = "kubehz-agent-bind"
	BindKey        = "bind-secret"
	// maxBindBytes is far above any generated secret and keeps a mistaken
	// Secret (a whole kubeconfig, say) out of the request.
	maxBindBytes = 1024
	// maxBindFile bounds the read: the value, plus generous whitespace.
	maxBindFile = 64 << 10
)

// ReadBind reads the one-time bind secret from path, trimmed: "" when path
// is "" or nothing is there (no bind Secret, or none of its keys is
// BindKey, which an optional volume shows as no file). Errors name the file
// and what is wrong, never the value.
func ReadBind(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the bind secret: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBindFile+1))
	if err != nil {
		return "", fmt.Errorf("read the bind secret: %w", err)
	}
	return parseBind(b, path)
}

// parseBind checks a bind secret file's bytes: trimmed, not empty, at most
// maxBindBytes of visible ASCII.
func parseBind(b []byte, path string) (string, error) {
	v := strings.TrimSpace(string(b))
	switch {
	case v == "":
		return "", fmt.Errorf("bind secret file %s (key %s of Secret %s) is empty", path, BindKey, BindSecretName)
	case len(b) > maxBindFile || len(v) > maxBindBytes:
		return "", fmt.Errorf("bind secret file %s (key %s of Secret %s) is longer than %d bytes", path, BindKey, BindSecretName, maxBindBytes)
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return "", fmt.Errorf("bind secret file %s (key %s of Secret %s): character %d is not a visible ASCII character",
				path, BindKey, BindSecretName, i+1)
		}
	}
	return v, nil
}

// HowToRead is the kubectl line that prints the claim code. The namespace
// and name are validated DNS names, so they need no shell quoting.
func HowToRead(namespace, name string) string {
	return fmt.Sprintf("kubectl -n %s get secret %s -o jsonpath='{.data.%s}' | base64 -d", namespace, name, ClaimKey)
}
