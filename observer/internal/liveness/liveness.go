// Package liveness lets the kubelet tell a wedged observer from a quiet one
// without a listening port: the main loop writes a deadline into a file on
// every turn, and `observer probe` (an exec probe) fails once the deadline
// has passed.
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

// Touch records that the loop is alive until deadline. The write is atomic
// (rename), so the probe never reads half a file.
func Touch(path string, deadline time.Time) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(deadline.UnixNano(), 10)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Check returns nil while the last recorded deadline lies in the future.
func Check(path string, now time.Time) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no liveness file at %s: the observer has not started its loop", path)
	}
	if err != nil {
		return err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("liveness file %s is unreadable: %w", filepath.Base(path), err)
	}
	deadline := time.Unix(0, ns)
	if !now.Before(deadline) {
		return fmt.Errorf("main loop stalled: no progress since its deadline %s (%s ago)",
			deadline.UTC().Format(time.RFC3339), now.Sub(deadline).Truncate(time.Second))
	}
	return nil
}
