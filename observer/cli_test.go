package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/testkit"
)

// The conventional ways to ask a command what it is answer on stdout and
// exit 0, without reading the configuration: none of them may start a
// second observer beating beside the pod's, and none is a bad invocation.
func TestRun_VersionAndHelpPrintToStdoutAndExitZero(t *testing.T) {
	testkit.VersionAndHelp(t, "observer", buildinfo.Version, run, "register", "probe", "status", "ready", "version", "KUBEHZ_API_URL")
}

// The unknown-subcommand error lists the new ones too, so a user who typed
// `observer vrsion` learns what to type.
func TestRun_UnknownSubcommandNamesVersionAndHelp(t *testing.T) {
	testkit.UnknownSubcommand(t, "observer", run, config.ExitCode)
}

// An unknown log level is a bad setting like any other: run refuses it
// with exit 2, naming the variable and the levels there are, before
// anything is written or sent. Read as info, `verbose` would hide the very
// lines the user asked for.
func TestRun_UnknownLogLevelExitsTwoNamingTheLevels(t *testing.T) {
	p := newFakePlatform(t)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"observer"}, testEnv(t, p, map[string]string{"KUBEHZ_LOG_LEVEL": "verbose"}), &stdout, &stderr)
	if config.ExitCode(err) != 2 || !strings.Contains(err.Error(), `KUBEHZ_LOG_LEVEL: "verbose" is not a log level (use debug, info, warn or error)`) {
		t.Fatalf("err = %v (exit %d), want exit 2 naming KUBEHZ_LOG_LEVEL and the levels", err, config.ExitCode(err))
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("wrote stdout %q, stderr %q before refusing", stdout.String(), stderr.String())
	}
	p.assertUntouched(t)
}

func TestRun_RegisterWithBadConfigurationExitsTwoBeforeAnyIO(t *testing.T) {
	p := newFakePlatform(t)
	getenv := testEnv(t, p, map[string]string{"CLUSTER_ID": "", "KUBEHZ_SECRET_NAME": "Not_A_Name"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"observer", "register"}, getenv, &stdout, &stderr)
	if config.ExitCode(err) != 2 {
		t.Fatalf("exit code %d (%v), want 2", config.ExitCode(err), err)
	}
	p.assertUntouched(t)
	if stdout.Len() != 0 {
		t.Errorf("stdout before any registration: %s", stdout.String())
	}
}

func TestRun_RegisterWithoutAClusterFailsBeforeAnyAnnounce(t *testing.T) {
	p := newFakePlatform(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"observer", "register"}, testEnv(t, p, nil), &stdout, &stderr)
	if config.ExitCode(err) != 1 {
		t.Fatalf("exit code %d (%v), want 1", config.ExitCode(err), err)
	}
	p.assertUntouched(t)
	assertNoToken(t, "stderr", stderr.String())
}
