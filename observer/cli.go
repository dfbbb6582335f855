package main

import (
	"fmt"
	"io"

	"kubehz.dev/agent/shared/buildinfo"
)

// The conventional ways to ask what a command is. They answer before the
// configuration is read, so they work in any container and never start an
// observer.
var (
	versionArgs = map[string]bool{"version": true, "--version": true, "-version": true}
	helpArgs    = map[string]bool{"help": true, "--help": true, "-help": true, "-h": true}
)

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

func printVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "observer %s\n", buildinfo.Version)
	return err
}

func printHelp(stdout io.Writer) error {
	_, err := io.WriteString(stdout, usage)
	return err
}
