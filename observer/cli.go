package main

import (
	"context"
	"io"
	"time"

	"kubehz.dev/agent/observer/internal/register"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/liveness"
)

// commands are the subcommands usage lists; each runs instead of the
// observer. Any other name is refused (config.Subcommand): a second observer
// beside the running one would beat too.
func commands(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) []config.Command {
	return []config.Command{
		{Name: "register", Run: func() error { return register.Command(ctx, getenv, stdout, stderr) }},
		// The exec liveness probe: a separate, short-lived process that only
		// reads the file the running observer keeps fresh.
		{Name: "probe", Run: func() error { return liveness.Check(livenessPath(getenv), time.Now()) }},
		{Name: "status", Run: func() error { return statusCommand(args[2:], getenv, stdout) }},
		{Name: "ready", Run: func() error { return readyCommand(ctx, getenv) }},
	}
}

// usage answers `observer help`; version and help answer before the
// configuration is read (config.Subcommand).
const usage = `Usage: observer [command]

With no command, observer runs: it watches the cluster read-only and sends a
heartbeat to the platform at KUBEHZ_API_URL for the cluster CLUSTER_ID.
Settings are environment variables (see the README's Configuration section);
a bad one exits 2 before anything is sent.

Commands:
  register   register the cluster without lok8s and store its token Secret
  probe      the liveness probe: fails when the running observer is wedged
  ready      the readiness probe: fails while heartbeats have failed too long
  status     print the running observer's state (--json for the raw file)
  version    print the version
  help       print this help
`
