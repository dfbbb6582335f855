package main

import (
	"context"
	"io"
	"time"

	"kubehz.dev/agent/observer/internal/register"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/liveness"
	"kubehz.dev/agent/shared/logs"
	"kubehz.dev/agent/shared/memlimit"
	"kubehz.dev/agent/shared/status"
)

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// A subcommand runs instead of the observer; a mistyped one is refused,
	// since a second observer beside the running one would beat too.
	if sub, err := config.Subcommand(args, "observer", usage, stdout,
		config.Command{Name: "register", Run: func() error { return register.Command(ctx, getenv, stdout, stderr) }},
		// The exec liveness probe: a separate, short-lived process that only
		// reads the file the running observer keeps fresh.
		config.Command{Name: "probe", Run: func() error { return liveness.Check(livenessPath(getenv), time.Now()) }},
		config.Command{Name: "status", Run: func() error { return statusCommand(args[2:], getenv, stdout) }},
		config.Command{Name: "ready", Run: func() error { return readyCommand(ctx, getenv) }},
	); sub {
		return err
	}
	started := time.Now()
	cfg, err := config.LoadObserver(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	log := logs.New(stderr, cfg.LogLevel)
	log.Info("Starting observer", "version", buildinfo.Version, "config", cfg)
	memlimit.Apply(getenv, log)
	// Written before the token is read: a missing Secret then shows in
	// `observer status` and, after the threshold, in readiness.
	state := newStateFile(status.PathNextTo(livenessPath(getenv)), started, buildinfo.Version, cfg.FullInterval, log)

	c, err := connect.Open(ctx, cfg.Common, getenv, "", nil, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the token Secret was being read
		}
		return err
	}
	obs := newObserver(cfg, log, c.API, c.Dynamic, c.Rest, c.Platform, livenessPath(getenv), state)
	err = obs.run(ctx)
	log.Info("Observer stopped")
	return err
}
