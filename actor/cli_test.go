package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/testkit"
)

// The conventional ways to ask a command what it is answer on stdout and
// exit 0, without reading the configuration: none of them may start a
// third replica campaigning for the Lease, and none is a bad invocation.
func TestRun_VersionAndHelpPrintToStdoutAndExitZero(t *testing.T) {
	testkit.VersionAndHelp(t, "actor", buildinfo.Version, run, "probe", "status", "version", "KUBEHZ_API_URL")
}

// The unknown-subcommand error lists the new ones too, so a user who typed
// `actor vrsion` learns what to type.
func TestRun_UnknownSubcommandNamesVersionAndHelp(t *testing.T) {
	testkit.UnknownSubcommand(t, "actor", run, config.ExitCode)
}

// An unknown log level is a bad setting like any other: run refuses it
// with exit 2, naming the variable and the levels there are, before the
// actor campaigns or sends anything.
func TestRun_UnknownLogLevelExitsTwoNamingTheLevels(t *testing.T) {
	env := map[string]string{
		"CLUSTER_ID": "c1.example.com", "KUBEHZ_API_URL": "https://api.kubehz.dev", "KUBEHZ_LOG_LEVEL": "verbose",
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"actor"}, func(k string) string { return env[k] }, &stdout, &stderr)
	if config.ExitCode(err) != 2 || !strings.Contains(err.Error(), `KUBEHZ_LOG_LEVEL: "verbose" is not a log level (use debug, info, warn or error)`) {
		t.Fatalf("err = %v (exit %d), want exit 2 naming KUBEHZ_LOG_LEVEL and the levels", err, config.ExitCode(err))
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("wrote stdout %q, stderr %q before refusing", stdout.String(), stderr.String())
	}
}
