package config

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"

	"kubehz.dev/agent/shared/printable"
	"kubehz.dev/agent/shared/token"
)

// NewLogger returns the agent's one log stream: JSON lines at level on w,
// with client-go's klog routed into the same handler so a user reads one
// format. klog then follows the newest logger.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	h := slog.Handler(slog.NewJSONHandler(printableWriter{w}, &slog.HandlerOptions{Level: level}))
	klogTarget.Store(&h)
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(klogHandler{})) })
	return slog.New(h)
}

// klog's logger is a process global that client-go's goroutines read
// without a lock, and an informer's list can outlive the run that started
// it. A binary builds one logger, but a test binary runs run() many times:
// setting klog's logger again raced with the last run's lists. So klog is
// set once, to a handler that forwards to the newest logger's.
var (
	klogOnce   sync.Once
	klogTarget atomic.Pointer[slog.Handler]
)

// klogHandler forwards to klogTarget, replaying the attributes and groups
// klog added on the way.
type klogHandler struct {
	with []func(slog.Handler) slog.Handler
}

func (k klogHandler) target() slog.Handler {
	h := *klogTarget.Load()
	for _, with := range k.with {
		h = with(h)
	}
	return h
}

func (k klogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return k.target().Enabled(ctx, l)
}

func (k klogHandler) Handle(ctx context.Context, r slog.Record) error {
	return k.target().Handle(ctx, r)
}

func (k klogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return klogHandler{append(slices.Clip(k.with), func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })}
}

func (k klogHandler) WithGroup(name string) slog.Handler {
	return klogHandler{append(slices.Clip(k.with), func(h slog.Handler) slog.Handler { return h.WithGroup(name) })}
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

// LogValue prints the shared settings; each binary's settings extend it.
func (c Common) LogValue() slog.Value { return slog.GroupValue(c.Attrs()...) }

// Attrs are the shared settings as LogValue prints them, for a binary's
// own LogValue to extend. The token shows only as redacted or <unset>, the
// URL only as scheme://host[:port]/path, and every other value is masked in
// case a token was pasted into it.
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
