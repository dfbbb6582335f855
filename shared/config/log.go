package config

import (
	"io"
	"log/slog"

	"k8s.io/klog/v2"

	"kubehz.dev/agent/shared/printable"
	"kubehz.dev/agent/shared/token"
)

// NewLogger returns the agent's one log stream: JSON lines at level on w,
// with client-go's klog routed into the same handler so a user reads one
// format. klog is process-global, so call it once, from run.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	log := slog.New(slog.NewJSONHandler(printableWriter{w}, &slog.HandlerOptions{Level: level}))
	klog.SetSlogLogger(log)
	return log
}

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

// LogValue prints the settings for the start-up log line. The token shows
// only as redacted or <unset>, the URL only as scheme://host[:port]/path, and
// every other value is masked in case a token was pasted into it.
func (o Observer) LogValue() slog.Value {
	return slog.GroupValue(append(o.Attrs(),
		// Go duration text, not the JSON handler's nanosecond integers.
		slog.String("fullInterval", o.FullInterval.String()),
		slog.String("debounce", o.Debounce.String()),
		slog.String("minGap", o.MinGap.String()),
		slog.Bool("reportNamespaces", o.ReportNamespaces),
		slog.String("readyAfterFailing", o.ReadyAfterFailing.String()),
	)...)
}

// LogValue prints the shared settings; each binary's settings extend it.
func (c Common) LogValue() slog.Value { return slog.GroupValue(c.Attrs()...) }

// Attrs are the shared settings as LogValue prints them, for a binary's
// own LogValue to extend.
func (c Common) Attrs() []slog.Attr {
	api := "<unset>"
	if c.APIURL != nil {
		api = printableURL(c.APIURL)
	}
	return []slog.Attr{
		slog.String("clusterID", token.Redact(c.ClusterID)),
		slog.String("apiURL", token.Redact(api)),
		slog.Any("agentToken", c.AgentToken),
		slog.String("tokenFile", token.Redact(c.TokenFile)),
		slog.String("namespace", token.Redact(c.Namespace)),
		slog.String("secretName", token.Redact(c.SecretName)),
		slog.String("mdNamespace", token.Redact(c.MDNamespace)),
		slog.String("actionsConfigMap", token.Redact(c.ActionsConfigMap)),
		slog.String("actorLease", token.Redact(c.ActorLease)),
		slog.String("logLevel", c.LogLevel.String()),
	}
}
