package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_RefusesATagWithoutADigest is what `make release-manifests` does
// when ACTOR_DIGEST is left out: an error that names it, and no directory.
func TestRun_RefusesATagWithoutADigest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "release")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-version", "v1.0.0", "-observer-digest", "sha256:" + strings.Repeat("c", 64), "-actor-digest", "", "-out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no digest for the actor image") {
		t.Fatalf("got %v, want a refusal naming the actor digest", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused release created %s", out)
	}
}

// TestRun_WritesTheManifestsAndSums lists the three files it wrote.
func TestRun_WritesTheManifestsAndSums(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run([]string{"-version", "v1.0.0", "-observer-digest", "sha256:" + strings.Repeat("c", 64), "-actor-digest", "sha256:" + strings.Repeat("d", 64), "-out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, f := range []string{"install-actor.yaml", "install-observer.yaml", "install-register.yaml", "SHA256SUMS"} {
		if !strings.Contains(stdout.String(), filepath.Join(out, f)+"\n") {
			t.Errorf("stdout does not list %s:\n%s", f, stdout.String())
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
