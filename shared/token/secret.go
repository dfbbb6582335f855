package token

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
)

// SecretKey is the key of the token inside the identity Secret.
const SecretKey = "agent-token"

// secretTimeout bounds the fallback GET so a slow apiserver cannot stall
// start-up or a re-read after a 401.
const secretTimeout = 10 * time.Second

// SecretReader fetches the raw token text from wherever the Secret lives.
// It is a function so unit tests need no Kubernetes client.
type SecretReader func(ctx context.Context) (string, error)

// FromSecret reads key agent-token of the Secret namespace/name through
// secrets, a client of that namespace. Errors name the Secret and how to fix
// access, never its data.
func FromSecret(secrets kubeapi.Getter[*kubeapi.Secret], namespace, name string) SecretReader {
	return func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, secretTimeout)
		defer cancel()
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get Secret %s/%s (mount it as the token file, or grant get on that one Secret): %w",
				namespace, name, err)
		}
		v, ok := s.Data[SecretKey]
		if !ok {
			return "", fmt.Errorf("no key %s in Secret %s/%s", SecretKey, namespace, name)
		}
		return string(v), nil
	}
}
