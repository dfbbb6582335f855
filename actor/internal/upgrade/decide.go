package upgrade

import (
	"kubehz.dev/agent/shared/wire"
)

// maxMinorSkew is the Kubernetes version skew policy: a kubelet may be at
// most this many minor versions older than the apiserver.
const maxMinorSkew = 3

// pass is phase 2 of §4.6: the decisions of one Plan, pool by pool in name
// order.
type pass struct {
	policy  Policy
	target  string // as received, trimmed; sent in the patch and shown in details
	want    Version
	wantOK  bool
	cpRaw   string
	cp      Version
	cpOK    bool
	mem     Memory
	rolling []string // the pools being rolled, by name
	retry   bool
}

func newPass(p Policy, target, controlPlane string, mem Memory) *pass {
	ps := &pass{policy: p, target: target, cpRaw: controlPlane, mem: mem}
	ps.want, ps.wantOK = ParseVersion(target)
	ps.cp, ps.cpOK = ParseVersion(controlPlane)
	return ps
}

// decide walks the §4.6 table for one pool; the first row that applies wins.
// ok is false when the pool has nothing to report.
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
	// G-9: the control-plane and autoscaler refusals come before every
	// other check, the missing kubelet field too, so these pools always get
	// their own reason. An MD that is never ours to roll says so first.
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
			from = derivedFrom(s.machines, ps.target)
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
		MD:              s.name,
		Namespace:       ps.policy.Namespace,
		ResourceVersion: s.md.ResourceVersion,
		From:            s.md.Kubelet,
		Target:          ps.target,
	}
	return step, true
}

// preflight checks a pool that would roll: the versions must parse, the roll
// must go up, and the control plane must allow the target kubelet. It
// returns the refusal, or "", and whether the refusal can clear by itself
// (the control plane is read or upgraded later) and so wants a retry.
//
// The original ran these checks once for the whole pass and failed every
// pool off target, including control-plane and autoscaler pools and leaving
// rolling pools unreported (G-9); here they concern only this pool.
func (ps *pass) preflight(s poolState) (string, bool) {
	if !ps.wantOK {
		return invalidTarget(ps.target), false
	}
	current, ok := ParseVersion(s.md.Kubelet)
	if !ok {
		return unparsedKubelet(s.name, s.md.Kubelet, ps.target), false
	}
	// G-8: the original rolled workers down when told to. A live machine
	// already running a newer kubelet than its template (a template rolled
	// back by hand) would be rolled down too, so it counts.
	if ps.want.compare(current) < 0 {
		return downgrade(s.name, s.md.Kubelet, ps.target), false
	}
	for _, mc := range s.machines {
		if v, ok := ParseVersion(mc.Kubelet); ok && !mc.Deleting && ps.want.compare(v) < 0 {
			return downgrade(s.name, mc.Kubelet+" on Machine "+mc.Name, ps.target), false
		}
	}
	if !ps.cpOK {
		return controlPlaneUnknown(ps.cpRaw), true
	}
	// Only major.minor take part in the skew policy; the patch level is free.
	wantMM := Version{Major: ps.want.Major, Minor: ps.want.Minor}
	cpMM := Version{Major: ps.cp.Major, Minor: ps.cp.Minor}
	if wantMM.compare(cpMM) > 0 {
		return controlPlaneBehind(ps.cpRaw, ps.target), true
	}
	// A target below the control plane's major, or more than maxMinorSkew
	// minors below it, is a kubelet the apiserver does not support. It stays
	// so until the desired version changes, so it is final.
	if ps.want.Major != ps.cp.Major || ps.want.Minor < ps.cp.Minor-maxMinorSkew {
		return skew(ps.cpRaw, ps.target), false
	}
	return "", false
}
