// Package logs sets up the agent's one log stream: JSON lines on stderr
// through log/slog, with client-go's klog output routed into the same
// handler so a user reads one format.
package logs

import (
	"io"
	"log/slog"

	"k8s.io/klog/v2"

	"kubehz.dev/agent/shared/printable"
)

// New returns a JSON logger at level and routes klog into it. klog is
// process-global, so call New once, from run.
func New(w io.Writer, level slog.Level) *slog.Logger {
	log := slog.New(slog.NewJSONHandler(printableWriter{w}, &slog.HandlerOptions{Level: level}))
	klog.SetSlogLogger(log)
	return log
}

// Err is the conventional attribute for an error.
func Err(err error) slog.Attr { return slog.Any("err", err) }

// printableWriter passes each JSON line on with every rune a terminal would
// obey as a \u escape. slog escapes the C0 controls itself but writes a C1
// CSI or a bidi override raw, and log lines carry outside text (platform
// errors, versions, object names) to whoever runs `kubectl logs`. The JSON
// handler writes one whole line per Write, so no rune is split.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(printable.JSON(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
