package config

import "log/slog"

// LogValue prints the settings for the start-up log line. The token shows
// only as redacted or <unset>, and the URL hides any password.
func (o Observer) LogValue() slog.Value {
	return slog.GroupValue(append(o.Common.attrs(),
		// Go duration text, not the JSON handler's nanosecond integers.
		slog.String("fullInterval", o.FullInterval.String()),
		slog.String("debounce", o.Debounce.String()),
		slog.String("minGap", o.MinGap.String()),
		slog.Bool("reportNamespaces", o.ReportNamespaces),
	)...)
}

// LogValue prints the shared settings; Observer (and later Actor) extend it.
func (c Common) LogValue() slog.Value { return slog.GroupValue(c.attrs()...) }

func (c Common) attrs() []slog.Attr {
	api := "<unset>"
	if c.APIURL != nil {
		api = c.APIURL.Redacted()
	}
	return []slog.Attr{
		slog.String("clusterID", c.ClusterID),
		slog.String("apiURL", api),
		slog.Any("agentToken", c.AgentToken),
		slog.String("tokenFile", c.TokenFile),
		slog.String("namespace", c.Namespace),
		slog.String("secretName", c.SecretName),
		slog.String("mdNamespace", c.MDNamespace),
		slog.String("logLevel", c.LogLevel.String()),
	}
}
