package main

import (
	"fmt"
	"io"

	"kubehz.dev/agent/shared/buildinfo"
)

// The conventional ways to ask what a command is. They answer before the
// configuration is read, so they work in any container and never start an
// actor campaigning for the Lease.
var (
	versionArgs = map[string]bool{"version": true, "--version": true, "-version": true}
	helpArgs    = map[string]bool{"help": true, "--help": true, "-help": true, "-h": true}
)

const usage = `Usage: actor [command]

With no command, actor runs: one of two replicas holds the Lease and, only
when the platform at KUBEHZ_API_URL authorizes it for the cluster CLUSTER_ID,
scales and heals machine-controller worker pools. Settings are environment
variables (see the README's Configuration and The actor sections); a bad one
exits 2 before anything is sent.

Commands:
  probe      the liveness probe: fails when the running actor is wedged
  status     print the running actor's state (--json for the raw file)
  version    print the version
  help       print this help
`

func printVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "actor %s\n", buildinfo.Version)
	return err
}

func printHelp(stdout io.Writer) error {
	_, err := io.WriteString(stdout, usage)
	return err
}
