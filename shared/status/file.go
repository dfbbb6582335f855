// Package status is the operator's view of a running binary without a
// listening port: the process keeps a small JSON state file next to its
// liveness file, and the binary's `status` subcommand, run with kubectl
// exec, reads and prints it. The observer's `ready` subcommand, an exec
// readiness probe, judges the same file. This package is what both binaries
// share: the file, its bounds and the table `status` prints; what each
// binary records lives with it (observer/internal/state,
// actor/replica.go).
package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileName sits next to the liveness file, on the same emptyDir.
const FileName = "status.json"

// MaxBytes bounds the file. Every text in it is clamped and the reports are
// at most 20, so a real state is a few KiB; anything larger is not ours.
const MaxBytes = 64 << 10

// PathNextTo is the state file's path beside the liveness file at alive.
func PathNextTo(alive string) string { return filepath.Join(filepath.Dir(alive), FileName) }

// Write stores v atomically (a temp file, then rename), so a reader never
// sees half a state. One process writes one file, from one goroutine at a
// time.
func Write(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > MaxBytes {
		return fmt.Errorf("state is %d bytes, over the %d-byte bound", len(b), MaxBytes)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ErrNotStarted means there is no state file: the process has not started,
// or writes its state elsewhere.
var ErrNotStarted = errors.New("no state file")

// Read reads the state file at path and decodes it as T (the observer's
// or the actor's state).
func Read[T any](path string) (T, error) {
	var v T
	b, err := read(path)
	if err != nil {
		return v, err
	}
	return Decode[T](b)
}

// Decode decodes a state file's bytes; a truncated or foreign file is an
// error.
func Decode[T any](b []byte) (T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("state file is unreadable: %w", err)
	}
	return v, nil
}

// read returns the file's bytes, refusing more than MaxBytes.
func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: the process has not started yet, or KUBEHZ_LIVENESS_FILE points elsewhere", ErrNotStarted, path)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("state file %s is larger than %d bytes", path, MaxBytes)
	}
	return b, nil
}

// MaxErrorLen bounds error texts in either binary's file, in UTF-16 code
// units.
const MaxErrorLen = 512
