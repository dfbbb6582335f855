package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/observer/internal/liveness"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeconfig"
	"kubehz.dev/agent/shared/logs"
	"kubehz.dev/agent/shared/memlimit"
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

	restCfg, err := kubeconfig.Load(getenv)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}

	tokens := token.NewSource(cfg.AgentToken, cfg.TokenFile, token.FromSecret(client, cfg.Namespace, cfg.SecretName), log)
	if err := config.CheckToken(ctx, tokens); err != nil || ctx.Err() != nil {
		return err
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

// applyMemoryLimit: see memlimit.Apply.
func applyMemoryLimit(getenv func(string) string, log *slog.Logger) { memlimit.Apply(getenv, log) }
