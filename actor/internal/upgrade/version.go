package upgrade

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes version cut to the three numbers the upgrade rules
// compare.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// ParseVersion reads a version as §4.6 does: spaces and a leading "v" are
// stripped, the rest split on ".", and at least major.minor is required, the
// major an integer and the minor its leading digits. So "v1.35.5+k3s1" and
// "v1.35" parse and "v1", "vX.Y.Z" and "" do not.
//
// Beyond the original it also reads the patch level, for the downgrade
// guard (G-8): build metadata ("+…") and a pre-release tag ("-…") are dropped
// before comparing, and a missing patch or one without digits is 0. A patch
// that starts with digits but does not fit an int is refused rather than
// read as 0, which could hide a downgrade.
func ParseVersion(s string) (Version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	s, _, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return Version{}, false
	}
	major, ok := number(parts[0])
	if !ok {
		return Version{}, false
	}
	minor, ok := number(leadingDigits(parts[1]))
	if !ok {
		return Version{}, false
	}
	patch := 0
	if len(parts) > 2 {
		if digits := leadingDigits(parts[2]); digits != "" {
			if patch, ok = number(digits); !ok {
				return Version{}, false
			}
		}
	}
	return Version{Major: major, Minor: minor, Patch: patch}, true
}

// compare orders versions by major, minor and patch.
func (v Version) compare(w Version) int {
	return cmp.Or(cmp.Compare(v.Major, w.Major), cmp.Compare(v.Minor, w.Minor), cmp.Compare(v.Patch, w.Patch))
}

// number reads a non-empty run of ASCII digits that fits an int.
func number(s string) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
