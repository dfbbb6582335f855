package upgrade

import (
	"math"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Rollout is a MachineDeployment's spec.strategy: how machine-controller
// replaces the pool's Machines once the template changes. A nil bound is
// absent, and machine-controller's default applies to it.
type Rollout struct {
	Type                     string // "" is RollingUpdate, the default and the only type machine-controller accepts
	MaxSurge, MaxUnavailable *intstr.IntOrString
	// Unreadable says spec.strategy is there but does not read as one.
	Unreadable bool
}

// Unavailable is how many of a pool's live Machines machine-controller may
// take down as soon as a roll starts, before any replacement is ready.
// Healing counts them as in flight in the pass that starts the roll, since
// no read shows them deleting yet.
//
// It resolves maxUnavailable as machine-controller v1.65.0 does: absent,
// it is 0 and maxSurge 1; it is a count, or a percentage of spec.replicas
// rounded down (maxSurge rounds up); when both come to 0, one Machine may
// go; never more than spec.replicas. machine-controller then removes old
// Machines until spec.replicas minus that remain, counting every Machine of
// the pool, so every live Machine past spec.replicas (the surge of an
// unfinished roll, a scale-down it has not acted on yet) may go too. What
// the agent cannot resolve (a strategy type it does not know, a bound that
// does not parse, a replica count it could not read) counts every live
// Machine, the most a roll can take down. The result never exceeds live.
func (r Rollout) Unavailable(replicas *int64, live int) int {
	n, replicasN, ok := r.resolve(replicas)
	if !ok {
		return live
	}
	return min(n+max(live-replicasN, 0), live)
}

// resolve is maxUnavailable as machine-controller resolves it, with the
// replica count it resolved it against; ok is false where it cannot tell.
func (r Rollout) resolve(replicas *int64) (n, total int, ok bool) {
	if r.Unreadable || (r.Type != "" && r.Type != "RollingUpdate") || replicas == nil || *replicas < 0 {
		return 0, 0, false
	}
	total = int(min(*replicas, math.MaxInt32))
	if total == 0 {
		return 0, 0, true // machine-controller's maxUnavailable of an empty pool
	}
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	if r.MaxSurge != nil {
		surge = *r.MaxSurge
	}
	if r.MaxUnavailable != nil {
		unavailable = *r.MaxUnavailable
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(&surge, total, true)
	if err != nil || s < 0 {
		return 0, 0, false
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(&unavailable, total, false)
	if err != nil || u < 0 {
		return 0, 0, false
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return min(u, total), total, true
}
