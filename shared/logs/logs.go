// Package logs sets up the agent's one log stream: JSON lines on stderr
// through log/slog, with client-go's klog output routed into the same
// handler so a user reads one format.
package logs

import (
	"io"
	"log/slog"

	"k8s.io/klog/v2"
)

// New returns a JSON logger at level and routes klog into it. klog is
// process-global, so call New once, from run.
func New(w io.Writer, level slog.Level) *slog.Logger {
	log := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	klog.SetSlogLogger(log)
	return log
}

// Err is the conventional attribute for an error.
func Err(err error) slog.Attr { return slog.Any("err", err) }
