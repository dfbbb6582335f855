// Package config reads the agents' settings from the environment once,
// validates all of them, and reports every bad variable in one error so an
// operator fixes the Deployment in a single edit. It also holds what both
// binaries do around those settings at start-up: the log stream, the
// subcommands and the exit code.
package config

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/token"
)

// Common is what both binaries need.
type Common struct {
	ClusterID  string
	APIURL     *url.URL // no trailing slash; a path prefix is kept
	AgentToken token.Token
	TokenFile  string
	Namespace  string // of the identity Secret
	SecretName string
	// MDNamespace holds machine-controller's MachineDeployments and Machines.
	MDNamespace string
	// ActionsConfigMap and ActorLease name the hand-off in Namespace. The
	// manifests set them, so a kustomize namePrefix reaches the binaries
	// along with the objects and the Roles' resourceNames.
	ActionsConfigMap string
	ActorLease       string
	LogLevel         slog.Level
}

// Observer is the observer binary's configuration.
type Observer struct {
	Common
	FullInterval     time.Duration
	Debounce         time.Duration
	MinGap           time.Duration
	ReportNamespaces bool
	// ReadyAfterFailing is how long heartbeat delivery may fail before the
	// readiness probe fails.
	ReadyAfterFailing time.Duration
}

// The raw structs are all strings so that go-envconfig only looks values up
// and applies defaults: it never parses, so it can neither stop at the first
// bad value nor quote a value (the token) in its error. RawCommon is
// exported for the actor's settings, which embed it the same way.
type RawCommon struct {
	ClusterID   string `env:"CLUSTER_ID"`
	APIURL      string `env:"KUBEHZ_API_URL"`
	AgentToken  string `env:"KUBEHZ_AGENT_TOKEN"`
	TokenFile   string `env:"KUBEHZ_AGENT_TOKEN_FILE, default=/var/run/secrets/kubehz/agent-token"`
	Namespace   string `env:"KUBEHZ_NAMESPACE, default=kubehz-system"`
	SecretName  string `env:"KUBEHZ_SECRET_NAME, default=kubehz-agent"`
	MDNamespace string `env:"KUBEHZ_MD_NAMESPACE, default=kube-system"`
	// The defaults are the names deploy/actor ships (report.ConfigMapName,
	// report.LeaseName).
	ActionsConfigMap string `env:"KUBEHZ_ACTIONS_CONFIGMAP, default=kubehz-actions"`
	ActorLease       string `env:"KUBEHZ_ACTOR_LEASE, default=kubehz-actor"`
	LogLevel         string `env:"KUBEHZ_LOG_LEVEL"`
}

// Common is a named field, not an embedding: go-envconfig cannot set an
// embedded field of an unexported type and would silently skip it.
type rawObserver struct {
	Common           RawCommon
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

// LoadReadiness reads and validates KUBEHZ_READY_AFTER_FAILING alone, as
// LoadObserver does, for the `observer ready` probe.
func LoadReadiness(ctx context.Context, l envconfig.Lookuper) (time.Duration, error) {
	return Load(ctx, l, func(raw rawReadiness, p *Problems) time.Duration {
		return p.duration(readyAfterFailing, raw.ReadyAfterFailing)
	})
}

// LoadObserver reads and validates the observer's settings from l (use
// envconfig.OsLookuper in main, envconfig.MapLookuper in tests). A
// validation failure is a *Error naming every bad variable.
func LoadObserver(ctx context.Context, l envconfig.Lookuper) (Observer, error) {
	return Load(ctx, l, func(raw rawObserver, p *Problems) Observer {
		return Observer{
			Common:            ParseCommon(raw.Common, p),
			FullInterval:      p.duration("KUBEHZ_FULL_INTERVAL", raw.FullInterval),
			Debounce:          p.duration("KUBEHZ_DEBOUNCE", raw.Debounce),
			MinGap:            p.duration("KUBEHZ_MIN_GAP", raw.MinGap),
			ReportNamespaces:  p.boolean("KUBEHZ_REPORT_NAMESPACES", raw.ReportNamespaces),
			ReadyAfterFailing: p.duration(readyAfterFailing, raw.Readiness.ReadyAfterFailing),
		}
	})
}

// Load looks Raw's variables up in l and builds the settings with parse,
// which notes every bad value in p and carries on, so the *Error names every
// bad variable at once.
func Load[Raw, T any](ctx context.Context, l envconfig.Lookuper, parse func(Raw, *Problems) T) (T, error) {
	var raw Raw
	var zero T
	if err := lookup(ctx, l, &raw); err != nil {
		return zero, err
	}
	var p Problems
	settings := parse(raw, &p)
	if err := p.err(); err != nil {
		return zero, err
	}
	return settings, nil
}

// ParseCommon checks what both binaries read, noting each bad value in p.
func ParseCommon(raw RawCommon, p *Problems) Common {
	return Common{
		ClusterID:        p.clusterID("CLUSTER_ID", raw.ClusterID),
		APIURL:           p.apiURL("KUBEHZ_API_URL", raw.APIURL),
		AgentToken:       p.token("KUBEHZ_AGENT_TOKEN", raw.AgentToken),
		TokenFile:        p.tokenFile("KUBEHZ_AGENT_TOKEN_FILE", raw.TokenFile),
		Namespace:        p.dnsLabel("KUBEHZ_NAMESPACE", raw.Namespace),
		SecretName:       p.DNSSubdomain("KUBEHZ_SECRET_NAME", raw.SecretName),
		MDNamespace:      p.dnsLabel("KUBEHZ_MD_NAMESPACE", raw.MDNamespace),
		ActionsConfigMap: p.DNSSubdomain("KUBEHZ_ACTIONS_CONFIGMAP", raw.ActionsConfigMap),
		ActorLease:       p.DNSSubdomain("KUBEHZ_ACTOR_LEASE", raw.ActorLease),
		LogLevel:         p.logLevel("KUBEHZ_LOG_LEVEL", raw.LogLevel),
	}
}

// lookup fills a raw struct. Every value is trimmed and a blank one counts
// as unset, so a stray space or an empty `value: ""` in a manifest means the
// default rather than an error.
func lookup(ctx context.Context, l envconfig.Lookuper, raw any) error {
	if l == nil {
		l = envconfig.OsLookuper()
	}
	trimmed := envconfig.LookuperFunc(func(key string) (string, bool) {
		v, ok := l.Lookup(key)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	})
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: raw, Lookuper: trimmed}); err != nil {
		return fmt.Errorf("read environment: %w", err)
	}
	return nil
}
