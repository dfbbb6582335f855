package upgrade

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// TestUpgrade_ControlPlaneVersionParsing pins the one version still read
// as the original read every version: the apiserver's gitVersion, major.minor
// only, for the skew policy (docs/contract.md#upgrade-versions).
func TestUpgrade_ControlPlaneVersionParsing(t *testing.T) {
	cases := []struct {
		in     string
		want   string // major.minor; "" when not read
		wantOK bool
	}{
		{"v1.35.6", "1.35", true},
		{"1.34.9", "1.34", true},
		{"v1.35.5+k3s1", "1.35", true},
		{"v1.35", "1.35", true},
		{" v1.36.0-rc.1 ", "1.36", true},
		{"v1.37.2-gke.1000", "1.37", true},
		{"", "", false},
		{"v1", "", false},
		{"vX.Y.Z", "", false},
		{"V1.35", "", false},
		{"1.35.99999999999999999999", "", false},
	}
	for _, tc := range cases {
		got, ok := parseControlPlane(tc.in)
		if ok != tc.wantOK || (ok && got.String() != tc.want) {
			t.Errorf("parseControlPlane(%q) = %v, %v; want %s, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

// TestUpgrade_KubeletVersionsFromTheClusterAreReadTolerantly: what the
// cluster spells loosely is read for comparison; what is still not a
// three-number semantic version is not read at all.
func TestUpgrade_KubeletVersionsFromTheClusterAreReadTolerantly(t *testing.T) {
	read := map[string]string{
		//nolint:gocritic // the spaces around a version are what this case reads
		"v1.35.5": "1.35.5", "1.35.5": "1.35.5", " v1.35.5 ": "1.35.5", "v1.35.5+k3s1": "1.35.5+k3s1",
		"1.36.0-rc.1": "1.36.0-rc.1",
	}
	for in, want := range read {
		if v, ok := parseKubelet(in); !ok || v.String() != want {
			t.Errorf("parseKubelet(%q) = %v, %v; want %s", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "latest", "v1.35", "v1", "1.35.05", "V1.35.5", "v1.35.5-1a", "v1.35.5 junk", "v1.35.5\n", "vX.Y.Z"} {
		if v, ok := parseKubelet(in); ok {
			t.Errorf("parseKubelet(%q) = %v, want not read", in, v)
		}
	}
}

// TestUpgrade_VersionsOrderAsSemver pins the order the downgrade guard
// relies on, each pair lower first, and the equalities that make a pool
// already at target.
func TestUpgrade_VersionsOrderAsSemver(t *testing.T) {
	ascending := [][2]string{
		{"v1.35.0-rc.1", "v1.35.0"},
		{"v1.35.0-alpha.1", "v1.35.0-beta.0"},
		{"v1.35.0-beta.2", "v1.35.0-rc.1"},
		{"v1.36.0-rc.1", "v1.36.0-rc.2"},
		{"v1.36.0-rc.9", "v1.36.0-rc.10"},
		{"v1.36.0-rc", "v1.36.0-rc.1"},
		{"v1.36.0-1", "v1.36.0-rc"},
		{"v1.35.9", "v1.36.0-alpha.0"},
		{"1.35.5", "v1.35.6"},
	}
	for _, p := range ascending {
		lo, ok1 := parseKubelet(p[0])
		hi, ok2 := parseKubelet(p[1])
		if !ok1 || !ok2 || !lo.LessThan(hi) || hi.LessThan(lo) {
			t.Errorf("%s < %s does not hold", p[0], p[1])
		}
	}
	want, _ := parseTarget("v1.35.6")
	for _, same := range []string{"v1.35.6", "1.35.6", "v1.35.6+k3s1", " 1.35.6 "} {
		if !equalVersion(same, want) {
			t.Errorf("%q does not equal v1.35.6", same)
		}
	}
	for _, other := range []string{"v1.35.6-rc.1", "v1.35.7", "latest", ""} {
		if equalVersion(other, want) {
			t.Errorf("%q equals v1.35.6", other)
		}
	}
}

// TestUpgrade_TheTargetGrammarAcceptsOnlyCanonicalSemver: accepted targets
// and one refusal reason per way to miss the grammar.
func TestUpgrade_TheTargetGrammarAcceptsOnlyCanonicalSemver(t *testing.T) {
	for _, s := range []string{"v1.35.6", "v0.0.0", "v1.36.0-rc.1", "v1.36.0-alpha.0.beta", "v1.36.0-rc-1.x-y",
		"v1.35.6-" + strings.Repeat("a", 56)} {
		if v, why := parseTarget(s); v == nil || canonical(v) != s {
			t.Errorf("parseTarget(%q) refused: %s", s, why)
		}
	}
	refused := map[string]string{
		"v1.35.6-" + strings.Repeat("a", 57): "65 bytes, over the 64 allowed",
		"1.35.6":                             "no leading v",
		"v1.35.6+build.1":                    "build metadata +build.1",
		//nolint:gocritic // the trailing space is the refused spelling
		"v1.35.6 ":                     "not in canonical form v1.35.6",
		"v1.35.6-01":                   "not a semantic version",
		"v1.35.6--x":                   `pre-release identifier "-x"`,
		"v1.35.6-99999999999999999999": `pre-release identifier "99999999999999999999"`,
	}
	for s, want := range refused {
		if v, why := parseTarget(s); v != nil || !strings.Contains(why, want) {
			t.Errorf("parseTarget(%q) = %v, %q; want refused for %q", s, v, why, want)
		}
	}
}

// strictTarget is the grammar written out from semver.org's BNF with its
// build part removed and the one restriction on pre-release identifiers
// (a number, or starting with a letter), independently of the code under
// test; numbers must also fit the 64 bits the library reads.
var strictTarget = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[A-Za-z][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[A-Za-z][0-9A-Za-z-]*))*)?$`)

func wantAccepted(s string) bool {
	if len(s) > 64 || !strictTarget.MatchString(s) {
		return false
	}
	for _, f := range strings.FieldsFunc(s[1:], func(r rune) bool { return r == '.' || r == '-' }) {
		if strings.Trim(f, "0123456789") == "" {
			if _, err := strconv.ParseUint(f, 10, 64); err != nil {
				return false
			}
		}
	}
	return true
}

// FuzzParseTarget checks the acceptance rule against the grammar above and
// against the library: an accepted target is a strict semantic version with
// a leading v and no build metadata that reads back to itself, and reads
// the same as a kubelet from the cluster, with or without its "v".
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"v1.35.6", "v1.36.0-rc.1", "v1.35.6+build.1", "v1.35.06", "v01.35.6", "v1.35.6 junk",
		"v1.35x.6", "1.35", "v1.35.6\x1b[0m", "v1.35.6-rc.01", "v1.35.6-1a", "v1.0.0-" + strings.Repeat("9", 25)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, why := parseTarget(s)
		if accepted := v != nil; accepted != wantAccepted(s) {
			t.Fatalf("parseTarget(%q) accepted %v (%s); the grammar says %v", s, accepted, why, !accepted)
		}
		if v == nil {
			if why == "" {
				t.Fatalf("parseTarget(%q) refused with no reason", s)
			}
			return
		}
		lib, err := version.ParseSemantic(s)
		if err != nil || lib.BuildMetadata() != "" || "v"+lib.String() != s || canonical(v) != s {
			t.Fatalf("parseTarget(%q) accepted what the library reads as %v, %v", s, lib, err)
		}
		for _, spelt := range []string{s, s[1:], " " + s + "+k3s1 "} {
			if k, ok := parseKubelet(spelt); !ok || !k.EqualTo(v) {
				t.Fatalf("parseKubelet(%q) = %v, %v; want %s", spelt, k, ok, s)
			}
		}
	})
}
