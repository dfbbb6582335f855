package upgrade

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

func TestMinimumVersion_IsTheOldestSourceAndRefusesAnythingNotAVersion(t *testing.T) {
	type want struct{ v, source, why string }
	for _, tc := range []struct {
		name     string
		readings []VersionReading
		want     want
	}{
		{"one upgraded apiserver, two older kubelets", []VersionReading{
			{"/version", "v1.36.0"}, {"Node cp-1", "v1.36.0"}, {"Node cp-2", "v1.35.6"}, {"Node cp-3", "v1.35.6"},
		}, want{"v1.35.6", "Node cp-2", ""}},
		{"an older apiserver image behind upgraded kubelets", []VersionReading{
			{"Node cp-1", "v1.36.0"}, {"Pod kube-system/kube-apiserver-cp-1", "v1.35.9"}, {"/version", "v1.36.0"},
		}, want{"v1.35.9", "Pod kube-system/kube-apiserver-cp-1", ""}},
		{"patch levels order", []VersionReading{{"a", "v1.35.10"}, {"b", "v1.35.9"}}, want{"v1.35.9", "b", ""}},
		{"a pre-release is below its release", []VersionReading{{"a", "v1.36.0"}, {"b", "v1.36.0-rc.1"}}, want{"v1.36.0-rc.1", "b", ""}},
		{"build metadata dropped, no v and spaces accepted", []VersionReading{{"a", " 1.35.6+k3s1 "}}, want{"v1.35.6", "a", ""}},
		{"equal versions: the first read names the source", []VersionReading{{"a", "v1.35.6+k3s1"}, {"b", "v1.35.6"}}, want{"v1.35.6", "a", ""}},
		{"nothing read", nil, want{"", "", "no source reported a version"}},
		{"a kubelet that has not reported", []VersionReading{{"/version", "v1.36.0"}, {"Node cp-2", ""}}, want{"", "", "Node cp-2: no version"}},
		{"major.minor only", []VersionReading{{"/version", "v1.36"}}, want{"", "", `/version: not a version: "v1.36"`}},
		{"junk after the version", []VersionReading{{"Node cp-1", "v1.36.0 junk"}}, want{"", "", `Node cp-1: not a version: "v1.36.0 junk"`}},
		{"a leading zero", []VersionReading{{"Node cp-1", "v1.036.0"}}, want{"", "", `Node cp-1: not a version: "v1.036.0"`}},
		{"64 bytes pass the length bound", []VersionReading{{"a", "v1.35.6-" + strings.Repeat("a", 56)}},
			want{"v1.35.6-" + strings.Repeat("a", 56), "a", ""}},
		{"65 bytes do not", []VersionReading{{"a", "v1.35.6-" + strings.Repeat("a", 57)}},
			want{"", "", "a: version of 65 bytes is not a version"}},
		{"one bad reading among good ones", []VersionReading{{"a", "v1.30.0"}, {"b", "garbage"}, {"c", "v1.29.0"}},
			want{"", "", `b: not a version: "garbage"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, source, why := MinimumVersion(tc.readings)
			if got := (want{v, source, why}); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestControlPlaneGate_VouchesOnlyForAMinimumHeldOnThreeReadsOverTenSeconds feeds each
// case's samples in order on a fixed clock and compares every answer.
func TestControlPlaneGate_VouchesOnlyForAMinimumHeldOnThreeReadsOverTenSeconds(t *testing.T) {
	at := func(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }
	old, upgraded := []VersionReading{{"/version", "v1.36.0"}, {"Node cp-2", "v1.35.6"}}, []VersionReading{{"/version", "v1.36.0"}, {"Node cp-2", "v1.36.0"}}
	ok := func(s float64, rs []VersionReading) VersionSample { return VersionSample{At: at(s), Readings: rs} }
	type answer struct{ vouched, why string }
	waiting := func(v string, n int, held string) answer {
		return answer{"", "minimum " + v + " read " + strconv.Itoa(n) + " time(s) over " + held + "; trusted after 3 reads over 10s"}
	}
	for _, tc := range []struct {
		name    string
		samples []VersionSample
		want    []answer
	}{
		{"three reads over exactly 10 s vouch", []VersionSample{ok(0, old), ok(5, old), ok(10, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "5s"), {"v1.35.6", ""}}},
		{"three reads over 9.999 s do not; the fourth does", []VersionSample{ok(0, old), ok(0, old), ok(9.999, old), ok(10, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "0s"), waiting("v1.35.6", 3, "9.999s"), {"v1.35.6", ""}}},
		{"two reads over a minute do not", []VersionSample{ok(0, old), ok(60, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "1m0s")}},
		{"a new minimum starts over, even an upgrade", []VersionSample{ok(0, old), ok(10, old), ok(20, old), ok(30, upgraded), ok(40, upgraded), ok(50, upgraded)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "10s"), {"v1.35.6", ""},
				waiting("v1.36.0", 1, "0s"), waiting("v1.36.0", 2, "10s"), {"v1.36.0", ""}}},
		{"an older minimum closes the gate at once", []VersionSample{ok(0, upgraded), ok(10, upgraded), ok(20, upgraded), ok(30, old)},
			[]answer{waiting("v1.36.0", 1, "0s"), waiting("v1.36.0", 2, "10s"), {"v1.36.0", ""}, waiting("v1.35.6", 1, "0s")}},
		{"a failed source closes it and starts over",
			[]VersionSample{ok(0, old), ok(10, old), ok(20, old), {At: at(30), Err: errors.New("list pods: forbidden")}, ok(40, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "10s"), {"v1.35.6", ""},
				{"", "cannot read every source: list pods: forbidden"}, waiting("v1.35.6", 1, "0s")}},
		{"an unparsable reading closes it and starts over",
			[]VersionSample{ok(0, old), ok(10, old), ok(20, old), ok(30, []VersionReading{{"Node cp-3", ""}}), ok(40, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "10s"), {"v1.35.6", ""},
				{"", "Node cp-3: no version"}, waiting("v1.35.6", 1, "0s")}},
		{"a clock stepped back starts over", []VersionSample{ok(100, old), ok(110, old), ok(50, old), ok(60, old), ok(70, old)},
			[]answer{waiting("v1.35.6", 1, "0s"), waiting("v1.35.6", 2, "10s"), waiting("v1.35.6", 1, "0s"),
				waiting("v1.35.6", 2, "10s"), {"v1.35.6", ""}}},
		{"an empty sample vouches for nothing", []VersionSample{ok(0, nil)}, []answer{{"", "no source reported a version"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g ControlPlaneGate
			for i, s := range tc.samples {
				v, why := g.Observe(s)
				if got := (answer{v, why}); got != tc.want[i] {
					t.Errorf("sample %d: got %+v, want %+v", i, got, tc.want[i])
				}
			}
		})
	}
}

func TestImageTag_ReadsTheTagOnly(t *testing.T) {
	for image, want := range map[string]string{
		"registry.k8s.io/kube-apiserver:v1.35.6":                                    "v1.35.6",
		"registry.k8s.io/kube-apiserver:v1.35.6@sha256:" + strings.Repeat("ab", 32): "v1.35.6",
		"registry.example:5000/mirror/kube-apiserver:v1.35.6":                       "v1.35.6",
		"registry.example:5000/kube-apiserver":                                      "",
		"registry.k8s.io/kube-apiserver@sha256:" + strings.Repeat("ab", 32):         "",
		"kube-apiserver":         "",
		"kube-apiserver:v1.35.6": "v1.35.6",
		"":                       "",
	} {
		if got := ImageTag(image); got != want {
			t.Errorf("ImageTag(%q) = %q, want %q", image, got, want)
		}
	}
}
