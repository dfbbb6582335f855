package main

// The observer's settings are those both binaries share (shared/config) and
// the observer's own, read from the environment once and validated
// together, so one error names every bad variable.

import (
	"context"
	"log/slog"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/config"
)

// settings is the observer binary's configuration.
type settings struct {
	config.Common
	FullInterval     time.Duration
	Debounce         time.Duration
	MinGap           time.Duration
	ReportNamespaces bool
	// ReadyAfterFailing is how long heartbeat delivery may fail before the
	// readiness probe fails.
	ReadyAfterFailing time.Duration
}

// rawSettings is strings only, so every value is checked here and every bad
// one is reported. Common is a named field, not an embedding: go-envconfig
// cannot set an embedded field of an unexported type and would silently
// skip it.
type rawSettings struct {
	Common           config.RawCommon
	FullInterval     string `env:"KUBEHZ_FULL_INTERVAL, default=60s"`
	Debounce         string `env:"KUBEHZ_DEBOUNCE, default=10s"`
	MinGap           string `env:"KUBEHZ_MIN_GAP, default=15s"`
	ReportNamespaces string `env:"KUBEHZ_REPORT_NAMESPACES"`
	Readiness        rawReadiness
}

// rawReadiness is apart so the readiness probe, a short-lived process, reads
// its one setting without the rest (the token among them). The default
// rides out a platform deploy or a brief outage (the sender backs off up to
// 5 minutes between tries) and still lets an alert on the pod's readiness
// fire well within the hour.
type rawReadiness struct {
	ReadyAfterFailing string `env:"KUBEHZ_READY_AFTER_FAILING, default=5m"`
}

const readyAfterFailing = "KUBEHZ_READY_AFTER_FAILING"

// loadReadiness reads and validates KUBEHZ_READY_AFTER_FAILING alone, as
// loadSettings does, for the `observer ready` probe.
func loadReadiness(ctx context.Context, l envconfig.Lookuper) (time.Duration, error) {
	return config.Load(ctx, l, func(raw rawReadiness, p *config.Problems) time.Duration {
		return p.Duration(readyAfterFailing, raw.ReadyAfterFailing)
	})
}

// loadSettings reads and validates the observer's settings from l (use
// envconfig.OsLookuper in main, envconfig.MapLookuper in tests). A
// validation failure is a *config.Error naming every bad variable.
func loadSettings(ctx context.Context, l envconfig.Lookuper) (settings, error) {
	return config.Load(ctx, l, func(raw rawSettings, p *config.Problems) settings {
		return settings{
			Common:            config.ParseCommon(raw.Common, p),
			FullInterval:      p.Duration("KUBEHZ_FULL_INTERVAL", raw.FullInterval),
			Debounce:          p.Duration("KUBEHZ_DEBOUNCE", raw.Debounce),
			MinGap:            p.Duration("KUBEHZ_MIN_GAP", raw.MinGap),
			ReportNamespaces:  p.Boolean("KUBEHZ_REPORT_NAMESPACES", raw.ReportNamespaces),
			ReadyAfterFailing: p.Duration(readyAfterFailing, raw.Readiness.ReadyAfterFailing),
		}
	})
}

// LogValue prints the settings for the start-up log line, redacted as
// Common's.
func (o settings) LogValue() slog.Value {
	return slog.GroupValue(append(o.Attrs(),
		// Go duration text, not the JSON handler's nanosecond integers.
		slog.String("fullInterval", o.FullInterval.String()),
		slog.String("debounce", o.Debounce.String()),
		slog.String("minGap", o.MinGap.String()),
		slog.Bool("reportNamespaces", o.ReportNamespaces),
		slog.String("readyAfterFailing", o.ReadyAfterFailing.String()),
	)...)
}
