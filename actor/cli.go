package main

import (
	"io"
	"time"

	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/liveness"
)

// commands are the subcommands usage lists; each runs instead of the actor.
// Any other name is refused (config.Subcommand), so that `kubectl exec …
// actor stauts` never starts a third replica campaigning beside the
// Deployment's two.
func commands(args []string, getenv func(string) string, stdout io.Writer) []config.Command {
	return []config.Command{
		// The exec liveness probe: a separate, short-lived process that only
		// reads the file the running actor keeps.
		{Name: "probe", Run: func() error { return liveness.Check(livenessPath(getenv), time.Now()) }},
		{Name: "status", Run: func() error { return statusCommand(args[2:], getenv, stdout) }},
	}
}

// usage answers `actor help`; version and help answer before the
// configuration is read (config.Subcommand).
const usage = `Usage: actor [command]

With no command, actor runs: one of two replicas holds the Lease and, only
when the platform at KUBEHZ_API_URL authorizes it for the cluster CLUSTER_ID,
scales, heals and upgrades machine-controller worker pools. Settings are
environment variables (see the README's Configuration and The actor
sections); a bad one exits 2 before anything is sent.

Commands:
  probe      the liveness probe: fails when the running actor is wedged
  status     print the running actor's state (--json for the raw file)
  version    print the version
  help       print this help
`
