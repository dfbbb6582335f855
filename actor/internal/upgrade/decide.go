package upgrade

import (
	"k8s.io/apimachinery/pkg/util/version"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// maxMinorSkew is the Kubernetes version skew policy: a kubelet may be at
// most this many minor versions older than the apiserver.
const maxMinorSkew = 3

// pass is the decisions of one Plan, pool by pool in name order
// (docs/contract.md#upgrade-decisions).
type pass struct {
	policy Policy
	// target is the canonical form of an accepted target, sent in the
	// patch and shown in details; the trimmed text as received when
	// refused.
	target  string
	want    *version.Version // nil when the target is refused
	wantWhy string           // why it is refused
	cpRaw   string
	cpWhy   string           // why cpRaw is "", when known
	cp      *version.Version // major.minor; nil when unknown or unread
	mem     RolledFrom
	rolling []string // the pools being rolled, by name
	retry   bool
}

func newPass(p Policy, target string, want *version.Version, wantWhy, controlPlane, cpWhy string, mem RolledFrom) *pass {
	ps := &pass{policy: p, target: target, want: want, wantWhy: wantWhy, cpRaw: controlPlane, cpWhy: cpWhy, mem: mem}
	if want != nil {
		ps.target = canonical(want)
	}
	ps.cp, _ = parseControlPlane(controlPlane)
	return ps
}

// decide walks the docs/contract.md#upgrade-decisions table for one pool; the
// first row that applies wins. ok is false when the pool has nothing to report.
func (ps *pass) decide(s poolState) (step Step, ok bool) {
	report := func(status, detail string) (Step, bool) {
		return Step{Action: action(s.name, status, detail, ps.policy.Revision)}, true
	}
	if s.hasMD && !s.atTarget {
		// A remembered "from" belongs to an earlier roll once the MD is off
		// target; left in place it would head a later roll's report.
		delete(ps.mem, s.name)
	}
	switch {
	case !s.hasMD:
		return report(wire.StatusFailed, noMD(s.name, ps.policy.Namespace))
	// The control-plane and autoscaler refusals come before every other check
	// (docs/contract.md#g-9), the missing kubelet field too, so these pools
	// always get their own reason. An MD that is never ours to roll says so
	// first.
	case s.cpReason != "":
		if s.atTarget {
			return Step{}, false
		}
		return report(wire.StatusFailed, controlPlane(s.name, s.cpReason))
	case s.autoscalerKey != "":
		if s.atTarget {
			return Step{}, false
		}
		return report(wire.StatusFailed, autoscaler(s.name, s.autoscalerKey))
	case s.md.Kubelet == "":
		return report(wire.StatusFailed, noKubelet(s.name))
	case s.converged:
		from := ps.mem[s.name]
		if from == "" {
			return Step{}, false // always at target: never driven by this process
		}
		return report(wire.StatusDone, progressDetail(from, ps.target, s.n, s.m))
	case s.atTarget: // mid-roll
		from := ps.mem[s.name]
		if from == "" {
			from = derivedFrom(s.machines, ps.want)
			if ps.mem != nil {
				ps.mem[s.name] = from
			}
		}
		ps.retry = true
		return report(wire.StatusInProgress, progressDetail(from, ps.target, s.n, s.m))
	}
	if why, retry := ps.preflight(s); why != "" {
		ps.retry = ps.retry || retry
		return report(wire.StatusFailed, why)
	}
	ps.retry = true
	// A pool whose own earlier roll is unfinished may be sent a new target
	// (machine-controller rolls it again); any other pool's roll blocks.
	for _, other := range ps.rolling {
		if other != s.name {
			return report(wire.StatusPending, oneAtATime(other))
		}
	}
	ps.rolling = append(ps.rolling, s.name)
	step, _ = report(wire.StatusInProgress, progressDetail(s.md.Kubelet, ps.target, s.n, s.m))
	step.Patch = &Patch{
		MDPatch:     refuse.MDPatch{MD: s.name, Namespace: ps.policy.Namespace, ResourceVersion: s.md.ResourceVersion},
		From:        s.md.Kubelet,
		Target:      ps.target, // canonical: only an accepted target gets here
		Unavailable: s.md.Rollout.Unavailable(s.md.Replicas, live(s.claimed)),
	}
	return step, true
}

// preflight checks a pool that would roll: the versions must be read, the
// roll must go up, and the control plane must allow the target kubelet. It
// returns the refusal, or "", and whether the refusal can clear by itself
// (the control plane is read or upgraded later) and so wants a retry.
//
// The original ran these checks once for the whole pass and failed every pool
// off target, including control-plane and autoscaler pools and leaving rolling
// pools unreported (docs/contract.md#g-9); here they concern only this pool.
func (ps *pass) preflight(s poolState) (string, bool) {
	if ps.want == nil {
		return invalidTarget(ps.target, ps.wantWhy), false
	}
	current, ok := parseKubelet(s.md.Kubelet)
	if !ok {
		return unparsedKubelet(s.name, s.md.Kubelet, ps.target), false
	}
	// The original rolled workers down when told to (docs/contract.md#g-8).
	// Semver order: a pre-release is below its release. A target equal to the
	// template is at target and never gets here.
	if ps.want.LessThan(current) {
		return downgrade(s.name, s.md.Kubelet, ps.target), false
	}
	if why := ps.liveDowngrade(s); why != "" {
		return why, false
	}
	if ps.cp == nil {
		return controlPlaneUnknown(ps.cpRaw, ps.cpWhy), true
	}
	// Only major.minor take part in the skew policy; the patch level is free.
	wantMM := version.MajorMinor(ps.want.Major(), ps.want.Minor())
	if wantMM.GreaterThan(ps.cp) {
		return controlPlaneBehind(ps.cpRaw, ps.target), true
	}
	// A target below the control plane's major, or more than maxMinorSkew
	// minors below it, is a kubelet the apiserver does not support. It stays
	// so until the desired version changes, so it is final.
	if ps.want.Major() != ps.cp.Major() || wantMM.LessThan(ps.cp.SubtractMinor(maxMinorSkew)) {
		return skew(ps.cpRaw, ps.target), false
	}
	return "", false
}

// liveDowngrade refuses a roll that would replace a live machine running a
// newer kubelet than the target (a template rolled back by hand, or a roll
// under way to a newer version), or one whose kubelet cannot be read and so
// cannot be shown not to be newer. Every machine that could belong to the
// pool counts, a machine several pools claim too; a deleting one is on its
// way out and does not.
func (ps *pass) liveDowngrade(s poolState) string {
	for _, mc := range s.claimed {
		if mc.Deleting {
			continue
		}
		v, ok := parseKubelet(mc.Kubelet)
		if !ok {
			return unparsedMachineKubelet(s.name, mc.Name, mc.Kubelet, ps.target)
		}
		if ps.want.LessThan(v) {
			return downgrade(s.name, mc.Kubelet+" on Machine "+mc.Name, ps.target)
		}
	}
	return ""
}
