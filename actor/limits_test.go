package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/config"
)

// A local healing limit that could not bind, or would loosen the contract's
// floors, stops the actor at start with exit 2, naming the variable and
// the range, before anything is sent.
func TestRun_BadHealLimitExits2NamingIt(t *testing.T) {
	env := map[string]string{
		"CLUSTER_ID": "c1.example.com", "KUBEHZ_API_URL": "https://api.kubehz.dev",
		"KUBEHZ_HEAL_MAX_IN_FLIGHT":                    "1001",
		"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS": "30",
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"actor"}, func(k string) string { return env[k] }, &stdout, &stderr)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || config.ExitCode(err) != 2 {
		t.Fatalf("err = %v (exit %d), want a configuration error, exit 2", err, config.ExitCode(err))
	}
	for _, want := range []string{
		"KUBEHZ_HEAL_MAX_IN_FLIGHT: must be from 0 to 1000, got 1001",
		"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS: must be from 60 to 86400, got 30",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("wrote stdout %q, stderr %q before refusing", stdout.String(), stderr.String())
	}
}
