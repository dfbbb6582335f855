package upgrade

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// maxTargetLen bounds the desired version, in bytes. A Kubernetes release
// or pre-release name (v1.35.0-rc.1) is about 12 bytes, and even a build's
// full name with its commit (v1.35.0-alpha.3.1234+0123456789abcd) is under
// 40; 64 leaves room for any real pre-release and is the bound the
// heartbeat already puts on every version string (wire.MaxVersionLen), so
// a target is never longer than what the observer may report of a cluster.
const maxTargetLen = 64

// Three readings of a version, one per source, all through
// k8s.io/apimachinery/pkg/util/version:
//
//   - the desired target, from the platform, is strict (parseTarget): it is
//     written into every Machine, so only one spelling per version passes;
//   - a kubelet version read from the cluster (a MachineDeployment's template
//     or a Machine's spec) is tolerant for comparison (parseKubelet): people
//     and tools spell them "1.35.5" or "v1.35.5+k3s1". One that still cannot
//     be read is never compared; the pool is refused instead;
//   - the control plane's gitVersion is read for major.minor only
//     (parseControlPlane), as the skew policy needs.

// parseTarget reads the desired kubernetesVersion. It accepts exactly
// vMAJOR.MINOR.PATCH[-PRERELEASE] of at most maxTargetLen bytes: a leading
// "v", no leading zeros, no build metadata (which semver ignores in ordering,
// so "v1.35.6+x" would roll a pool to what it already runs) and nothing
// around it. Each pre-release identifier is a number or starts with a letter
// (see orderable). An accepted target is its own canonical form, so what is
// patched is what was compared. Otherwise it returns why it is refused.
func parseTarget(s string) (*version.Version, string) {
	if len(s) > maxTargetLen {
		return nil, fmt.Sprintf("%d bytes, over the %d allowed", len(s), maxTargetLen)
	}
	if !strings.HasPrefix(s, "v") {
		return nil, "no leading v"
	}
	v, err := version.ParseSemantic(s)
	if err != nil {
		return nil, "not a semantic version"
	}
	if v.BuildMetadata() != "" {
		return nil, fmt.Sprintf("build metadata +%s is not allowed", v.BuildMetadata())
	}
	if c := canonical(v); c != s {
		return nil, fmt.Sprintf("not in canonical form %s", c)
	}
	if why := orderable(v); why != "" {
		return nil, why
	}
	return v, ""
}

// parseKubelet reads a kubelet version from the cluster. Surrounding spaces,
// a missing leading "v" and build metadata are tolerated; build metadata
// plays no part in ordering, so "v1.35.6+k3s1" equals v1.35.6. A value that
// is not a semantic version with three numbers ("v1.35", "latest", "") or
// whose pre-release cannot be ordered is not read: ok is false.
func parseKubelet(s string) (v *version.Version, ok bool) {
	v, err := version.ParseSemantic(s)
	if err != nil || orderable(v) != "" {
		return nil, false
	}
	return v, true
}

// parseControlPlane reads the apiserver's gitVersion for the skew policy:
// major.minor, whatever follows ("v1.35.5+k3s1", "v1.35"). "v1", "vX.Y.Z"
// and "" are not read.
func parseControlPlane(s string) (*version.Version, bool) {
	v, err := version.ParseGeneric(s)
	if err != nil {
		return nil, false
	}
	return version.MajorMinor(v.Major(), v.Minor()), true
}

// orderable says why v's pre-release cannot be ordered as semver orders it,
// or "". The library compares two identifiers as numbers only when both fit
// 64 bits, and otherwise as text, where semver ranks every number below every
// other identifier. Text order agrees with that only when the other
// identifier starts with a letter, so an identifier must be a number that
// fits 64 bits or start with a letter: "rc.1", "alpha.0", "beta" pass; "1a"
// and "-x" (valid semver, ordered wrongly) do not. The library has already
// refused numbers with leading zeros.
func orderable(v *version.Version) string {
	if v.PreRelease() == "" {
		return ""
	}
	for _, id := range strings.Split(v.PreRelease(), ".") {
		if _, err := strconv.ParseUint(id, 10, 64); err == nil {
			continue
		}
		if c := id[0] | 0x20; c < 'a' || c > 'z' { // ASCII letters only: 0x20 folds upper to lower case
			return fmt.Sprintf("pre-release identifier %q is neither a number nor starts with a letter", id)
		}
	}
	return ""
}

// canonical is how a target is written: "v" and the library's spelling.
func canonical(v *version.Version) string { return "v" + v.String() }

// equalVersion says the cluster-side kubelet s reads as the same version as
// want; one that cannot be read is never equal.
func equalVersion(s string, want *version.Version) bool {
	if want == nil {
		return false
	}
	v, ok := parseKubelet(s)
	return ok && v.EqualTo(want)
}
