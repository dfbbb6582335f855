package safety_test

import (
	"strconv"
	"strings"
)

// semver is major.minor.patch, the test's own reading of a version for the
// skew policy, so the skew check does not trust the parser it checks. The
// order of whole versions, pre-releases included, is judged in
// upgrade_versions_test.go.
type semver struct{ major, minor, patch int }

// parseVersion reads "v1.35.5", "1.35", "v1.35.5+k3s1": an optional "v",
// build metadata and pre-release dropped, a missing patch is 0. Anything
// else, "v1" or "vX.Y" or "", does not parse.
func parseVersion(s string) (semver, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	s, _, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return semver{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return semver{}, false
		}
		n[i] = v
	}
	return semver{n[0], n[1], n[2]}, true
}

// less orders by major, minor and patch: the skew model's minimum over the
// control plane's members needs no more.
func (v semver) less(w semver) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

// sameVersion compares two version strings ignoring a leading "v".
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}
