// Package kubeconfig builds the Kubernetes client configuration both
// binaries use: in-cluster ServiceAccount credentials, or KUBECONFIG when run
// outside a cluster (tests, the demo, a laptop).
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kubehz.dev/agent/shared/buildinfo"
)

// Load returns the client configuration, with the agent's User-Agent and
// the contract's rate limits (20 QPS, burst 30).
func Load(getenv func(string) string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path := getenv("KUBECONFIG"); path != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config (in-cluster, or set KUBECONFIG): %w", err)
	}
	cfg.UserAgent = buildinfo.UserAgent()
	cfg.QPS, cfg.Burst = 20, 30
	// Protobuf halves decode memory and CPU for the big lists (pods at
	// scale); the dynamic client switches back to JSON on its own.
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	return cfg, nil
}
