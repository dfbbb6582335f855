package safety_test

import (
	"math/rand/v2"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
)

// limits are one scenario's KUBEHZ_HEAL_* local limits: the cluster
// owner's bounds, which no document may loosen.
type limits struct {
	maxInFlight                           int
	minCooldown, minStartup, minUnhealthy time.Duration
}

// newLimits picks a scenario's local limits, deploy/actor's defaults (3,
// 600 s, 600 s, 300 s) among them.
func newLimits(r *rand.Rand) limits {
	return limits{
		maxInFlight:  pick(r, []int{0, 1, 2, 3, 3, 1000}),
		minCooldown:  pick(r, []time.Duration{0, 0, 300 * time.Second, 600 * time.Second}),
		minStartup:   pick(r, []time.Duration{60 * time.Second, 600 * time.Second}),
		minUnhealthy: pick(r, []time.Duration{60 * time.Second, 300 * time.Second}),
	}
}

// forExecutor hands the limits to the code under test.
func (l limits) forExecutor() heal.Limits {
	return heal.Limits{MaxInFlight: l.maxInFlight, MinCooldown: l.minCooldown,
		MinStartupTimeout: l.minStartup, MinUnhealthyAfter: l.minUnhealthy}
}

// policy is the healing policy in force: the document's, floored at the
// contract's 60 s and tightened to the local limits, worked out here
// rather than by heal.PolicyFrom.
type policy struct {
	maxUnhealthy                      int
	unhealthyAfter, startup, cooldown time.Duration
}

func effective(h desired.Healing, l limits) policy {
	seconds := func(s int64) time.Duration { return time.Duration(s) * time.Second }
	return policy{
		maxUnhealthy:   min(h.MaxUnhealthy, l.maxInFlight),
		unhealthyAfter: max(seconds(h.UnhealthyAfterSeconds), time.Minute, l.minUnhealthy),
		startup:        max(seconds(h.NodeStartupTimeoutSeconds), time.Minute, l.minStartup),
		cooldown:       max(seconds(h.CooldownSeconds), l.minCooldown),
	}
}

// hostileHealing makes some documents ask for every brake off, at the
// contract's own bounds, so the local limits are what holds.
func hostileHealing(r *rand.Rand, d *desired.Document) {
	if !chance(r, 0.25) {
		return
	}
	d.Healing.MaxUnhealthy = pick(r, []int{100, 1000})
	d.Healing.CooldownSeconds = 0
	d.Healing.NodeStartupTimeoutSeconds = pick(r, []int64{0, 60})
	d.Healing.UnhealthyAfterSeconds = pick(r, []int64{0, 60})
}

// checkLocalLimits holds a Machine delete to the local limits directly,
// whatever the document says: fewer than maxInFlight Machines deleting
// before it, the pool's last heal at least minCooldown ago, and the
// Machine unhealthy for at least the local windows.
func (c *checker) checkLocalLimits(wr *write, m *machine, pool string) {
	l := c.limits
	if n := c.ref.inFlight + c.healed; n >= l.maxInFlight {
		c.fail("8 (local limits)", "%s with %d Machine(s) already deleting: KUBEHZ_HEAL_MAX_IN_FLIGHT %d", wr, n, l.maxInFlight)
	}
	last := c.termStart
	if t, ok := c.lastHeal[pool]; ok && t.After(last) {
		last = t
	}
	if since := c.w.now.Sub(last); since < l.minCooldown {
		c.fail("8 (local limits)", "%s %s after pool %q's last heal or the term's start: KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS %s",
			wr, since, pool, l.minCooldown)
	}
	if name := c.w.followedNode(m); name != "" {
		if n := c.w.node(name); n == nil || n.ready == "True" || n.since.IsZero() || c.w.now.Sub(n.since) < l.minUnhealthy {
			c.fail("8 (local limits)", "%s: node %s has not been unhealthy for KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS %s",
				wr, name, l.minUnhealthy)
		}
		return
	}
	if m.created.IsZero() || c.w.now.Sub(m.created) < l.minStartup {
		c.fail("8 (local limits)", "%s: a Machine %s old is inside KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS %s",
			wr, age(c.w.now, m.created), l.minStartup)
	}
}
