package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"kubehz.dev/agent/shared/config"
)

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
