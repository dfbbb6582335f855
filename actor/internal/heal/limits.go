package heal

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/wire"
)

// Limits are the cluster owner's own bounds on healing, set in
// deploy/actor's configuration (KUBEHZ_HEAL_*): a desired document can
// tighten them, never loosen them.
type Limits struct {
	MaxInFlight       int           // caps maxUnhealthy
	MinUnhealthyAfter time.Duration // floors unhealthyAfterSeconds
	MinStartupTimeout time.Duration // floors nodeStartupTimeoutSeconds
	MinCooldown       time.Duration // floors cooldownSeconds
}

// LimitsTarget is the target of the report that the local limits replaced
// part of the document's healing policy. It holds a space, so no Machine
// can share it.
const LimitsTarget = "healing policy"

// PolicyFrom applies the contract's 60 s floors and the local limits to the
// document's healing block. Where a local limit replaced what the document
// asked, Limited says so.
func PolicyFrom(h desired.Healing, revision int64, l Limits) Policy {
	var limited []string
	limit := func(field string, asked, used int64) {
		if used != asked {
			limited = append(limited, fmt.Sprintf("%s %d (asked %d)", field, used, asked))
		}
	}
	seconds := func(field string, asked int64, floor, local time.Duration) time.Duration {
		d := max(time.Duration(asked)*time.Second, floor)
		if local > d {
			limit(field, asked, int64(local/time.Second))
			return local
		}
		return d
	}
	p := Policy{Revision: revision, MaxUnhealthy: min(h.MaxUnhealthy, l.MaxInFlight)}
	limit("maxUnhealthy", int64(h.MaxUnhealthy), int64(p.MaxUnhealthy))
	p.Cooldown = seconds("cooldownSeconds", h.CooldownSeconds, 0, l.MinCooldown)
	p.StartupTimeout = seconds("nodeStartupTimeoutSeconds", h.NodeStartupTimeoutSeconds, MinWindow, l.MinStartupTimeout)
	p.UnhealthyAfter = seconds("unhealthyAfterSeconds", h.UnhealthyAfterSeconds, MinWindow, l.MinUnhealthyAfter)
	if len(limited) > 0 {
		p.Limited = "refusing more than this cluster's local limits (deploy/actor KUBEHZ_HEAL_*); using " +
			strings.Join(limited, ", ")
	}
	return p
}

// NamedPools is Policy.Named for the document's pools: true for the first
// desired.PoolsPerPass names in sorted order, a repeated name taking a place in
// the cut for each time it is named, as in scaling and upgrades; false for
// a name past them, so that a refusal can tell it from a pool not named.
func NamedPools(pools []desired.Pool) map[string]bool {
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	named := make(map[string]bool, len(names))
	for i, name := range names {
		named[name] = named[name] || i < desired.PoolsPerPass
	}
	return named
}

// limitsReport is the report that the document asked past the local limits,
// or nil. It is failed, as every refusal is, while healing goes on within
// the limits; its text holds no time, so it reads the same on every pass.
func limitsReport(p Policy) *wire.Action {
	if p.Limited == "" {
		return nil
	}
	a := action(LimitsTarget, wire.StatusFailed, p.Limited, p.Revision)
	return &a
}
