package testkit

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// Main is a binary's run, as its main calls it.
type Main func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// VersionAndHelp checks every conventional way to ask binary what it is:
// each answers on stdout, writes nothing to stderr and returns nil (exit 0)
// without reading the environment, so none starts the binary's work and
// none is a bad invocation. help must mention each of helpMentions besides
// the usage line.
func VersionAndHelp(t *testing.T, binary, version string, run Main, helpMentions ...string) {
	t.Helper()
	versionLine := []string{binary + " " + version + "\n"}
	usage := "Usage: " + binary + " [command]"
	tests := []struct {
		arg  string
		want []string
	}{
		{"version", versionLine},
		{"--version", versionLine},
		{"-version", versionLine},
		{"help", append([]string{usage}, helpMentions...)},
		{"--help", []string{usage}},
		{"-help", []string{usage}},
		{"-h", []string{usage}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			// An environment that would fail to load: these must not read it.
			if err := run(context.Background(), []string{binary, tt.arg}, func(string) string { return "" }, &stdout, &stderr); err != nil {
				t.Fatalf("err = %v, want nil, exit 0", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout %q lacks %q", stdout.String(), w)
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
		})
	}
}

// UnknownSubcommand checks that a mistyped subcommand is a bad invocation
// (exit 2, as exitCode maps it) whose error names version and help, so the
// user learns what to type.
func UnknownSubcommand(t *testing.T, binary string, run Main, exitCode func(error) int) {
	t.Helper()
	err := run(context.Background(), []string{binary, "vrsion"}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "version") || !strings.Contains(err.Error(), "help") {
		t.Errorf("err = %v (exit %d), want exit 2 naming version and help", err, exitCode(err))
	}
}
