package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"time"

	"kubehz.dev/agent/actor/internal/lead"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/liveness"
	"kubehz.dev/agent/shared/memlimit"
	"kubehz.dev/agent/shared/status"
)

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if sub, err := config.Subcommand(args, "actor", usage, stdout, commands(args, getenv, stdout)...); sub {
		return err
	}
	started := time.Now()
	cfg, err := loadSettings(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	log := config.NewLogger(stderr, cfg.LogLevel)
	alive := progress{liveness.NewBeacon(livenessPath(getenv), liveness.Options{Log: log})}
	alive.beacon.Mark(startupGrace)
	identity := identity(getenv)
	log.Info("Starting actor", "version", buildinfo.Version, "identity", identity, "config", cfg)
	memlimit.Apply(getenv, log)
	state := newStateFile(status.PathNextTo(livenessPath(getenv)), identity, buildinfo.Version, started, log)

	// The identity in the User-Agent tells the two replicas apart in the
	// apiserver's audit log, where both act as the same ServiceAccount.
	c, err := connect.Open(ctx, cfg.Common, getenv,
		connect.Options{KubeAgent: "actor/" + identity, Wrap: lead.DeadlineTransport, Log: log})
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the token Secret was being read
		}
		return err
	}
	a, err := newActor(cfg, log, identity, c, state, alive)
	if err != nil {
		return err
	}
	return a.run(ctx)
}

// identity names this process in the Lease: the pod name, plus a random
// suffix so a restarted container never inherits its predecessor's term.
func identity(getenv func(string) string) string {
	name := getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "_" + hex.EncodeToString(b)
}
