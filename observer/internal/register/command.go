package register

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeconfig"
	"kubehz.dev/agent/shared/platform"
)

// Command is `observer register`: it reads the configuration (a bad one is
// a *config.Error, exit 2, before anything is written or sent), connects,
// and runs the registration once.
func Command(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := LoadSettings(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	log := config.NewLogger(stderr, cfg.LogLevel)
	log.Info("Starting registration", "version", buildinfo.Version, "cluster", cfg.ClusterID,
		"secret", cfg.Namespace+"/"+cfg.SecretName)
	restCfg, err := kubeconfig.Load(getenv)
	if err != nil {
		return err
	}
	api, err := kubeapi.New(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	reg, err := platform.NewRegistrar(cfg.APIURL, platform.Options{UserAgent: buildinfo.UserAgent(), Logger: log})
	if err != nil {
		return err
	}
	defer reg.CloseIdleConnections()
	return Run(ctx, cfg, Deps{Secrets: api.Secrets(cfg.Namespace), Announcer: reg, Random: rand.Reader, Log: log}, stdout)
}
