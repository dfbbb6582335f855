package main

import (
	"context"
	"io"
	"time"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/memlimit"
	"kubehz.dev/agent/shared/status"
)

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if sub, err := config.Subcommand(args, "observer", usage, stdout, commands(ctx, args, getenv, stdout, stderr)...); sub {
		return err
	}
	started := time.Now()
	cfg, err := loadSettings(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	log := config.NewLogger(stderr, cfg.LogLevel)
	log.Info("Starting observer", "version", buildinfo.Version, "config", cfg)
	memlimit.Apply(getenv, log)
	// Written before the token is read: a missing Secret then shows in
	// `observer status` and, after the threshold, in readiness.
	statusFile := newStateFile(status.PathNextTo(livenessPath(getenv)), started, buildinfo.Version, cfg.FullInterval, log)

	c, err := connect.Open(ctx, cfg.Common, getenv, connect.Options{Log: log})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the token Secret was being read
		}
		return err
	}
	obs := newObserver(cfg, log, c, livenessPath(getenv), statusFile)
	err = obs.run(ctx)
	log.Info("Observer stopped")
	return err
}
