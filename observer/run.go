package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/observer/internal/liveness"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/logs"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/token"
)

func run(ctx context.Context, args []string, getenv func(string) string, _, stderr io.Writer) error {
	if len(args) > 1 && args[1] == "probe" {
		// The exec liveness probe: a separate, short-lived process that only
		// reads the file the running observer keeps fresh.
		return liveness.Check(livenessPath(getenv), time.Now())
	}
	cfg, err := config.LoadObserver(ctx, envconfig.LookuperFunc(func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	}))
	if err != nil {
		return err
	}
	log := logs.New(stderr, cfg.LogLevel)
	log.Info("Starting observer", "version", buildinfo.Version, "config", cfg)
	applyMemoryLimit(getenv, log)

	restCfg, err := kubeConfig(getenv)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}

	tokens := token.NewSource(cfg.AgentToken, cfg.TokenFile, token.FromSecret(client, cfg.Namespace, cfg.SecretName), log)
	if _, err := tokens.Token(ctx); err != nil {
		switch {
		case ctx.Err() != nil:
			return nil // stopped while the Secret was being read
		case errors.Is(err, token.ErrMalformed):
			// A token that is there but wrong is bad configuration, like a
			// malformed KUBEHZ_AGENT_TOKEN: exit 2, nothing sent.
			return &config.Error{Problems: []config.Problem{{Var: "agent token", Reason: err.Error()}}}
		}
		return fmt.Errorf("resolve the agent token: %w", err)
	}
	plat, err := platform.New(platform.Options{
		BaseURL: cfg.APIURL, ClusterID: cfg.ClusterID, Credentials: tokens,
		UserAgent: buildinfo.UserAgent(), Logger: log,
	})
	if err != nil {
		return err
	}

	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	obs := newObserver(cfg, log, client, dyn, restCfg, plat, livenessPath(getenv))
	err = obs.run(ctx)
	log.Info("Observer stopped")
	return err
}

// kubeConfig is the in-cluster ServiceAccount config, or KUBECONFIG when run
// outside a cluster (tests, the demo, a laptop).
func kubeConfig(getenv func(string) string) (*rest.Config, error) {
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
	// Protobuf halves decode memory and CPU for the big lists (pods at scale).
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	return cfg, nil
}

// applyMemoryLimit sets the Go soft memory limit to 90% of the container's
// limit (KUBEHZ_MEMORY_LIMIT, bytes, from the downward API), unless the user
// set GOMEMLIMIT themselves. The headroom covers what the runtime does not
// count, so the collector tightens before the kernel OOM-kills.
func applyMemoryLimit(getenv func(string) string, log *slog.Logger) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	raw := getenv("KUBEHZ_MEMORY_LIMIT")
	if raw == "" {
		return
	}
	// ParseInt, not Sscan: Sscan reads "1e9" as 1 and "512Mi" as 512, and a
	// limit of a few bytes would keep the GC running flat out.
	limit, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || limit <= 0 {
		log.Warn("Ignoring KUBEHZ_MEMORY_LIMIT", "value", raw)
		return
	}
	soft := limit / 10 * 9
	debug.SetMemoryLimit(soft)
	log.Info("Go memory limit set", "bytes", soft, "containerLimit", limit)
}
