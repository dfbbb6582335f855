package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/config"
)

func TestRun_BadConfigurationExitsTwoBeforeAnyIO(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantVars []string
	}{
		{
			name:     "missing cluster ID",
			env:      map[string]string{"CLUSTER_ID": ""},
			wantVars: []string{"CLUSTER_ID"},
		},
		{
			name:     "missing API URL",
			env:      map[string]string{"KUBEHZ_API_URL": ""},
			wantVars: []string{"KUBEHZ_API_URL"},
		},
		{
			name:     "plain http to a remote host",
			env:      map[string]string{"KUBEHZ_API_URL": "http://kubehz.example.com"},
			wantVars: []string{"KUBEHZ_API_URL"},
		},
		{
			name:     "malformed token",
			env:      map[string]string{"KUBEHZ_AGENT_TOKEN": badToken},
			wantVars: []string{"KUBEHZ_AGENT_TOKEN"},
		},
		{
			name:     "zero min-gap next to a valid token",
			env:      map[string]string{"KUBEHZ_MIN_GAP": "0s"},
			wantVars: []string{"KUBEHZ_MIN_GAP"},
		},
		{
			name: "every bad variable named at once",
			env: map[string]string{
				"CLUSTER_ID":               "a/b",
				"KUBEHZ_AGENT_TOKEN":       badToken,
				"KUBEHZ_NAMESPACE":         "Kube_System",
				"KUBEHZ_FULL_INTERVAL":     "-1m",
				"KUBEHZ_DEBOUNCE":          "soon",
				"KUBEHZ_MIN_GAP":           "0s",
				"KUBEHZ_REPORT_NAMESPACES": "maybe",
			},
			wantVars: []string{
				"CLUSTER_ID", "KUBEHZ_AGENT_TOKEN", "KUBEHZ_NAMESPACE",
				"KUBEHZ_FULL_INTERVAL", "KUBEHZ_DEBOUNCE", "KUBEHZ_MIN_GAP", "KUBEHZ_REPORT_NAMESPACES",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFakePlatform(t)
			// Validation does no I/O: neither the platform nor the apiserver
			// the kubeconfig names may hear from run.
			kubeconfig, dials := countingKubeconfig(t)
			env := map[string]string{"KUBECONFIG": kubeconfig}
			maps.Copy(env, tt.env)
			var stderr bytes.Buffer
			err := runBriefly(t, testEnv(t, p, env), &stderr)
			if n := dials.Load(); n != 0 {
				t.Errorf("run connected %d times to the apiserver before rejecting the configuration", n)
			}

			var cfgErr *config.Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("run() = %v, want a *config.Error", err)
			}
			if code := config.ExitCode(err); code != 2 {
				t.Errorf("exitCode = %d, want 2", code)
			}
			var gotVars []string
			for _, problem := range cfgErr.Problems {
				gotVars = append(gotVars, problem.Var)
			}
			if fmt.Sprint(gotVars) != fmt.Sprint(tt.wantVars) {
				t.Errorf("problems name %v, want %v", gotVars, tt.wantVars)
			}
			for _, name := range tt.wantVars {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error does not name %s: %v", name, err)
				}
			}
			assertNoToken(t, "error", err.Error())
			assertNoToken(t, "stderr", stderr.String())
			p.assertUntouched(t)
		})
	}
}

func TestRun_NoClusterIsARuntimeFailure(t *testing.T) {
	// rest.InClusterConfig reads the process environment, not getenv.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")

	tests := []struct {
		name string
		env  func(t *testing.T) map[string]string
	}{
		{"KUBECONFIG names a missing file", func(*testing.T) map[string]string { return nil }},
		{"no KUBECONFIG outside a cluster", func(*testing.T) map[string]string {
			return map[string]string{"KUBECONFIG": ""}
		}},
		{"token Secret on an unreachable apiserver", func(t *testing.T) map[string]string {
			return map[string]string{
				"KUBECONFIG":              unreachableKubeconfig(t),
				"KUBEHZ_AGENT_TOKEN":      "",
				"KUBEHZ_AGENT_TOKEN_FILE": filepath.Join(t.TempDir(), "no-such-token"),
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFakePlatform(t)
			var stderr bytes.Buffer
			err := runBriefly(t, testEnv(t, p, tt.env(t)), &stderr)

			var cfgErr *config.Error
			if err == nil || errors.As(err, &cfgErr) || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("run() = %v, want a prompt failure that is not a configuration error", err)
			}
			if code := config.ExitCode(err); code != 1 {
				t.Errorf("exitCode = %d, want 1", code)
			}
			assertNoToken(t, "error", err.Error())
			assertNoToken(t, "stderr", stderr.String())
			p.assertUntouched(t)
		})
	}
}

// With the token in the environment, an unreachable apiserver leaves run
// waiting for the caches; the first beat only follows their sync, so the
// platform hears nothing, and a cancel is a clean stop.
func TestRun_NothingSentBeforeCachesSyncAndCancelIsClean(t *testing.T) {
	p := newFakePlatform(t)
	getenv := testEnv(t, p, map[string]string{"KUBECONFIG": unreachableKubeconfig(t)})
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	err := run(ctx, []string{"observer"}, getenv, &bytes.Buffer{}, &stderr)
	if err != nil {
		t.Fatalf("run() = %v, want nil after cancel", err)
	}
	if code := config.ExitCode(err); code != 0 {
		t.Errorf("exitCode = %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "Starting observer") {
		t.Errorf("no start-up log line on stderr: %s", stderr.String())
	}
	assertNoToken(t, "stderr", stderr.String())
	p.assertUntouched(t)
}

func TestExitCode_MapsErrorKinds(t *testing.T) {
	cfgErr := &config.Error{Problems: []config.Problem{{Var: "CLUSTER_ID", Reason: "is required"}}}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"clean stop", nil, 0},
		{"bad configuration", cfgErr, 2},
		{"wrapped bad configuration", fmt.Errorf("load: %w", cfgErr), 2},
		{"runtime failure", errors.New("kubernetes config: not in a cluster"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := config.ExitCode(tt.err); got != tt.want {
				t.Errorf("config.ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// A mistyped subcommand is refused before anything else: falling through to
// the observer itself would start a second one beating beside the pod's.
func TestRun_UnknownSubcommandExitsTwoWithoutStarting(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"observer", "stauts"}, func(string) string { return "" }, &stdout, &stderr)
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) || len(cfgErr.Problems) != 1 || cfgErr.Problems[0].Var != "command" {
		t.Fatalf("err = %v, want only the unknown-command problem (no configuration was read)", err)
	}
	if !strings.Contains(err.Error(), `"stauts"`) || !strings.Contains(err.Error(), "status") {
		t.Errorf("the error should name the bad and the known subcommands: %v", err)
	}
	if config.ExitCode(err) != 2 || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and nothing written", config.ExitCode(err), stdout.String(), stderr.String())
	}
}
