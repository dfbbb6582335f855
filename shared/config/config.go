// Package config reads the settings both binaries share (Common) and holds
// what each binary reads its own settings with (Load, ParseCommon and the
// Problems helpers); those settings live in the binary. The environment is
// read once, every value is validated, and every bad variable is reported
// in one error so an operator fixes the Deployment in a single edit. It
// also holds what both binaries do around their settings at start-up: the
// log stream, the subcommands and the exit code.
package config

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

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

// The raw structs are all strings so that go-envconfig only looks values up
// and applies defaults: it never parses, so it can neither stop at the first
// bad value nor quote a value (the token) in its error. RawCommon is
// exported for each binary's raw settings, which hold it as a named field
// Common, not an embedding: go-envconfig cannot set an embedded field of an
// unexported type and would silently skip it.
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
		ClusterID:        p.ClusterID("CLUSTER_ID", raw.ClusterID),
		APIURL:           p.APIURL("KUBEHZ_API_URL", raw.APIURL),
		AgentToken:       p.token("KUBEHZ_AGENT_TOKEN", raw.AgentToken),
		TokenFile:        p.tokenFile("KUBEHZ_AGENT_TOKEN_FILE", raw.TokenFile),
		Namespace:        p.DNSLabel("KUBEHZ_NAMESPACE", raw.Namespace),
		SecretName:       p.DNSSubdomain("KUBEHZ_SECRET_NAME", raw.SecretName),
		MDNamespace:      p.DNSLabel("KUBEHZ_MD_NAMESPACE", raw.MDNamespace),
		ActionsConfigMap: p.DNSSubdomain("KUBEHZ_ACTIONS_CONFIGMAP", raw.ActionsConfigMap),
		ActorLease:       p.DNSSubdomain("KUBEHZ_ACTOR_LEASE", raw.ActorLease),
		LogLevel:         p.LogLevel("KUBEHZ_LOG_LEVEL", raw.LogLevel),
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
