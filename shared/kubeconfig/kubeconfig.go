// Package kubeconfig builds the Kubernetes client configuration both
// binaries use: in-cluster ServiceAccount credentials, or KUBECONFIG when run
// outside a cluster (tests, the demo, a laptop).
package kubeconfig

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"kubehz.dev/agent/shared/buildinfo"
)

// Load returns the client configuration, with the agent's User-Agent, the
// contract's rate limits (20 QPS, burst 30, for all clients together) and
// uncompressed responses.
func Load(getenv func(string) string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if paths := getenv("KUBECONFIG"); paths != "" {
		// kubectl's loading rules: a colon-separated KUBECONFIG merges its
		// files (first one wins per key), so the kubeconfig that works for
		// kubectl works here too. Precedence is set from getenv, not read
		// from the process environment, so callers stay testable.
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(paths)}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config (in-cluster, or set KUBECONFIG): %w", err)
	}
	cfg.UserAgent = buildinfo.UserAgent()
	cfg.QPS, cfg.Burst = 20, 30
	// One bucket for the whole process: every client is built from a copy
	// of this config, and a copy shares the limiter, where each would
	// otherwise build its own from QPS and Burst and the process would
	// reach a multiple of the limit.
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	// The apiserver gzips any response over 128 KiB that a client accepts
	// gzipped, watch streams included, and the agent sits next to it on the
	// cluster network, where bandwidth is cheap and the user's control-plane
	// CPU is not: kube-controller-manager and kube-scheduler turn it off for
	// the same reason. At 20,000 pods (test/bench) the initial sync cost the
	// apiserver about 15 % less CPU, and the observer about 5 % less, without it.
	cfg.DisableCompression = true
	// Protobuf halves decode memory and CPU for the big lists (pods at
	// scale); the dynamic client switches back to JSON on its own.
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	return cfg, nil
}
