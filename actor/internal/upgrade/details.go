package upgrade

import (
	"fmt"
	"unicode/utf8"

	"kubehz.dev/agent/actor/internal/refuse"
)

// The detail texts of docs/contract.md#report-details. Each carries the keyword
// the platform and the tests look for; the rest says what to do about it.

// progressDetail is the exact progress shape, with U+2192.
func progressDetail(from, to string, n, m int64) string {
	return fmt.Sprintf("%s → %s (%d/%d)", from, to, n, m)
}

func invalidName(name string) string {
	return fmt.Sprintf("invalid pool name %q: not a DNS-1123 subdomain", refuse.Sanitize(name))
}

func duplicateName(name string) string {
	return fmt.Sprintf("pool %q is named more than once in the desired state; refusing to pick one", name)
}

func listMDsFailed(namespace string, err error) string {
	return fmt.Sprintf("cannot list MachineDeployments in namespace %q: %s", namespace, errText(err))
}

func listMachinesFailed(namespace string, err error) string {
	return fmt.Sprintf("cannot list Machines in namespace %q: %s (progress needs the machines read RBAC)",
		namespace, errText(err))
}

func errText(err error) string {
	if err == nil {
		return "no result"
	}
	return refuse.Sanitize(err.Error())
}

func noMD(pool, namespace string) string {
	return fmt.Sprintf("no MachineDeployment named %q in namespace %q (pools are matched to MachineDeployments by name)",
		pool, namespace)
}

func controlPlane(md, why string) string {
	return fmt.Sprintf("refusing: MachineDeployment %q looks like a control-plane pool (%s); the agent never upgrades control planes",
		md, why)
}

func autoscaler(md, key string) string {
	return fmt.Sprintf("unsupported: MachineDeployment %q is managed by cluster-autoscaler (annotation %s); roll it with the autoscaler's tooling",
		md, key)
}

func noKubelet(md string) string {
	return fmt.Sprintf("MachineDeployment %q has no kubelet version field (spec.template.spec.versions.kubelet); refusing to invent one", md)
}

// invalidTarget names why the target is refused, before the target itself:
// quoted (so control characters show escaped) and cut to maxTargetLen bytes,
// so a long one cannot push the reason past the detail's clamp.
func invalidTarget(target, why string) string {
	shown := target
	if len(shown) > maxTargetLen {
		cut := maxTargetLen
		for cut > 0 && !utf8.RuneStart(target[cut]) {
			cut-- // never split a code point
		}
		shown = target[:cut] + "…"
	}
	return fmt.Sprintf("invalid desired version (%s): %q; want vMAJOR.MINOR.PATCH[-pre-release], no leading zeros, at most %d bytes, e.g. v1.35.6",
		why, shown, maxTargetLen)
}

func unparsedKubelet(md, current, target string) string {
	return fmt.Sprintf("cannot parse kubelet version %q of MachineDeployment %q, so it cannot be compared with %s; refusing",
		refuse.Sanitize(current), md, target)
}

func unparsedMachineKubelet(md, machine, kubelet, target string) string {
	return fmt.Sprintf("cannot parse kubelet version %q of Machine %q in pool %q, so a roll to %s cannot be shown to go upward; refusing",
		refuse.Sanitize(kubelet), machine, md, target)
}

func downgrade(md, current, target string) string {
	return fmt.Sprintf("refusing a downgrade: MachineDeployment %q runs kubelet %s and the desired %s is older", md, current, target)
}

func controlPlaneUnknown(observed, why string) string {
	if observed == "" && why != "" {
		return fmt.Sprintf("control plane version unknown (%s); will retry", refuse.Sanitize(why))
	}
	if observed == "" {
		return "control plane version unknown (not read yet); will retry"
	}
	return fmt.Sprintf("control plane version unknown (cannot parse %q); will retry", refuse.Sanitize(observed))
}

func controlPlaneBehind(observed, target string) string {
	return fmt.Sprintf("control plane not yet at target: observed %s, target %s; upgrade the control plane first (lo provision / kubeone apply)",
		observed, target)
}

func skew(observed, target string) string {
	return fmt.Sprintf("version skew: target %s is outside the policy for control plane %s (a kubelet may be at most %d minors older than the apiserver, same major); refusing",
		target, observed, maxMinorSkew)
}

func oneAtATime(rolling string) string {
	return fmt.Sprintf("one pool rolls at a time; waiting for pool %q to converge", rolling)
}
