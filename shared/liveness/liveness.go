// Package liveness lets the kubelet tell a wedged binary from a quiet one
// without a listening port: the work loop writes a deadline into a file as
// it makes progress, and the binary's `probe` subcommand (an exec probe)
// fails once the deadline has passed. A file that says "idle" passes: the
// process has no loop that must make progress (an actor standby).
package liveness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultPath is on the emptyDir the Deployment mounts; the root filesystem
// is read-only.
const DefaultPath = "/run/kubehz/alive"

// idle is what the file holds while no loop is due to make progress.
const idle = "idle"

// Touch records that the loop is alive until deadline.
func Touch(path string, deadline time.Time) error {
	return write(path, strconv.FormatInt(deadline.UnixNano(), 10))
}

// Idle records that no loop is due to make progress: the probe passes.
func Idle(path string) error { return write(path, idle) }

// write is atomic (rename), so the probe never reads half a file.
func write(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Check returns nil while the last recorded deadline lies in the future.
func Check(path string, now time.Time) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no liveness file at %s: the process has not started its loop", path)
	}
	if err != nil {
		return err
	}
	content := strings.TrimSpace(string(b))
	if content == idle {
		return nil
	}
	ns, err := strconv.ParseInt(content, 10, 64)
	if err != nil {
		return fmt.Errorf("liveness file %s is unreadable: %w", filepath.Base(path), err)
	}
	deadline := time.Unix(0, ns)
	if !now.Before(deadline) {
		return fmt.Errorf("work loop stalled: no progress since its deadline %s (%s ago)",
			deadline.UTC().Format(time.RFC3339), now.Sub(deadline).Truncate(time.Second))
	}
	return nil
}
