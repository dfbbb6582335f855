package main

// The actor's settings are those both binaries share (shared/config) and the
// actor's own, read from the environment once and validated together, so one
// error names every bad variable.

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/token"
)

// settings is the actor binary's configuration. None of it can turn acting on:
// only the platform's execution flags, within the RBAC, authorize a write.
type settings struct {
	config.Common
	// DesiredPoll is the pause between desired-state polls, before jitter.
	DesiredPoll time.Duration
	// MaxReplicas is the per-pool ceiling; a desired count above it is
	// refused, never clamped.
	MaxReplicas int
	// HealEvictionTimeout is how long a heal-deleted Machine's node may drain
	// before the eviction unwedge steps in.
	HealEvictionTimeout time.Duration
	// HealLimits are KUBEHZ_HEAL_*: the cluster owner's bounds on healing;
	// the platform's document can only tighten them.
	HealLimits heal.Limits
	// Deployment is the actor's own Deployment in Namespace, whose deletion
	// is the kill switch.
	Deployment string
}

// Upper bounds the contract leaves open. They keep seconds far from
// time.Duration's overflow (about 292 years), and a value past a day is a
// typo (milliseconds, say) rather than a policy.
const (
	maxDesiredPollSeconds  = 86_400
	maxReplicasLimit       = 10_000
	minEvictionTimeoutSecs = 60 // shorter would force-delete pods still evicting normally
	maxEvictionTimeoutSecs = 86_400
	maxHealLimitSecs       = 86_400
	// A local limit past the document's own bounds would never bind:
	// maxUnhealthy stops at desired.MaxUnhealthyLimit, and both detection
	// windows start at heal.MinWindow.
	maxInFlightLimit = desired.MaxUnhealthyLimit
	minWindowSecs    = int(heal.MinWindow / time.Second)
)

// rawActor mirrors the observer's raw settings: strings only, so every value is checked here
// and every bad one is reported.
type rawActor struct {
	Common              config.RawCommon
	DesiredPoll         string `env:"KUBEHZ_DESIRED_POLL_SECONDS, default=60"`
	MaxReplicas         string `env:"KUBEHZ_MAX_REPLICAS, default=50"`
	HealEvictionTimeout string `env:"KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS, default=300"`
	Deployment          string `env:"KUBEHZ_ACTOR_DEPLOYMENT, default=actor"`

	// The defaults are deploy/actor's, and the README's Security model says
	// what each follows.
	HealMaxInFlight       string `env:"KUBEHZ_HEAL_MAX_IN_FLIGHT, default=3"`
	HealMinCooldown       string `env:"KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS, default=600"`
	HealMinStartupTimeout string `env:"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS, default=600"`
	HealMinUnhealthyAfter string `env:"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS, default=300"`
}

// loadSettings reads and validates the actor's settings from l (use
// envconfig.OsLookuper in main, envconfig.MapLookuper in tests). A
// validation failure is a *config.Error naming every bad variable.
func loadSettings(ctx context.Context, l envconfig.Lookuper) (settings, error) {
	return config.Load(ctx, l, func(raw rawActor, p *config.Problems) settings {
		return settings{
			Common: config.ParseCommon(raw.Common, p),
			DesiredPoll: seconds(p, "KUBEHZ_DESIRED_POLL_SECONDS", raw.DesiredPoll,
				1, maxDesiredPollSeconds),
			MaxReplicas: integer(p, "KUBEHZ_MAX_REPLICAS", raw.MaxReplicas, "a whole number of replicas",
				1, maxReplicasLimit),
			HealEvictionTimeout: seconds(p, "KUBEHZ_HEAL_EVICTION_TIMEOUT_SECONDS", raw.HealEvictionTimeout,
				minEvictionTimeoutSecs, maxEvictionTimeoutSecs),
			HealLimits: heal.Limits{
				MaxInFlight: integer(p, "KUBEHZ_HEAL_MAX_IN_FLIGHT", raw.HealMaxInFlight, "a whole number of Machines",
					0, maxInFlightLimit),
				MinCooldown: seconds(p, "KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS", raw.HealMinCooldown, 0, maxHealLimitSecs),
				MinStartupTimeout: seconds(p, "KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS", raw.HealMinStartupTimeout,
					minWindowSecs, maxHealLimitSecs),
				MinUnhealthyAfter: seconds(p, "KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS", raw.HealMinUnhealthyAfter,
					minWindowSecs, maxHealLimitSecs),
			},
			Deployment: p.DNSSubdomain("KUBEHZ_ACTOR_DEPLOYMENT", raw.Deployment),
		}
	})
}

// seconds reads a whole number of seconds: "60", never "60s", so the unit
// the variable's name promises is the only one there is.
func seconds(p *config.Problems, name, v string, lo, hi int) time.Duration {
	return time.Duration(integer(p, name, v, "a whole number of seconds", lo, hi)) * time.Second
}

// integer reads a base-10 integer within lo..hi; out of range is refused,
// never clamped.
func integer(p *config.Problems, name, v, what string, lo, hi int) int {
	n, err := strconv.Atoi(v)
	switch {
	case errors.Is(err, strconv.ErrRange):
		p.Add(name, "must be from %d to %d, got %s", lo, hi, v)
	case err != nil:
		p.Add(name, "%q is not %s", v, what)
	case n < lo || n > hi:
		p.Add(name, "must be from %d to %d, got %d", lo, hi, n)
	default:
		return n
	}
	return 0
}

// LogValue prints the settings for the start-up log line, redacted as
// Common's.
func (a settings) LogValue() slog.Value {
	return slog.GroupValue(append(a.Attrs(),
		slog.String("desiredPoll", a.DesiredPoll.String()),
		slog.Int("maxReplicas", a.MaxReplicas),
		slog.String("healEvictionTimeout", a.HealEvictionTimeout.String()),
		slog.Int("healMaxInFlight", a.HealLimits.MaxInFlight),
		slog.String("healMinCooldown", a.HealLimits.MinCooldown.String()),
		slog.String("healMinNodeStartupTimeout", a.HealLimits.MinStartupTimeout.String()),
		slog.String("healMinUnhealthyAfter", a.HealLimits.MinUnhealthyAfter.String()),
		slog.String("deployment", token.Redact(a.Deployment)),
	)...)
}
