package upgrade

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// FuzzMinimumVersion holds the rule against the library it rests on: whatever two
// sources answer, a version comes back only when both are semantic
// versions, and then it is the older of the two, in canonical form.
func FuzzMinimumVersion(f *testing.F) {
	for _, seed := range [][2]string{
		{"v1.36.0", "v1.35.6"}, {"v1.36.0-rc.1", "v1.36.0"}, {"1.35.6+k3s1", "v1.35.6"}, {"", "v1.35.6"},
		{"v1.35", "v1.35.6"}, {"v1.35.6 junk", "v1.35.6"}, {"v1.35.6\x1b[31m", "v1.35.6"}, {"\tv1.35.6\n", "v01.35.6"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got, source, why := MinimumVersion([]VersionReading{{"a", a}, {"b", b}})
		va, errA := version.ParseSemantic(a)
		vb, errB := version.ParseSemantic(b)
		valid := errA == nil && errB == nil && len(a) <= 64 && len(b) <= 64
		if (why == "") != valid {
			t.Fatalf("MinimumVersion(%q, %q) = %q, %q; parse errors %v, %v", a, b, got, why, errA, errB)
		}
		if !valid {
			return
		}
		lower, name := va, "a"
		if vb.LessThan(va) {
			lower, name = vb, "b"
		}
		if want := "v" + lower.WithBuildMetadata("").String(); got != want || source != name {
			t.Fatalf("MinimumVersion(%q, %q) = %q from %s, want %q from %s", a, b, got, source, want, name)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("MinimumVersion(%q, %q) = %q carries a control character", a, b, got)
		}
	})
}

// FuzzImageTag: never a panic, and the tag holds no part of the registry,
// the repository path or the digest.
func FuzzImageTag(f *testing.F) {
	for _, seed := range []string{"registry.k8s.io/kube-apiserver:v1.35.6", "r:5000/k:v1@sha256:ab", "r:5000/k", "@", ":", "/:"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, image string) {
		if tag := ImageTag(image); strings.ContainsAny(tag, "/@") {
			t.Fatalf("ImageTag(%q) = %q", image, tag)
		}
	})
}
