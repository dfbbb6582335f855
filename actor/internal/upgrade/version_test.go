package upgrade

import (
	"strings"
	"testing"
)

// TestUpgrade_84VersionParsing pins §14 item 84 and the patch level the
// downgrade guard reads.
func TestUpgrade_84VersionParsing(t *testing.T) {
	cases := []struct {
		in     string
		want   Version
		wantOK bool
	}{
		{"v1.35.6", Version{1, 35, 6}, true},
		{"1.34.9", Version{1, 34, 9}, true},
		{"v1.35.5+k3s1", Version{1, 35, 5}, true},
		{"v1.35", Version{1, 35, 0}, true},
		{"", Version{}, false},
		{"v1", Version{}, false},
		{"vX.Y.Z", Version{}, false},
		{" v1.36.0-rc.1 ", Version{1, 36, 0}, true},
		{"1.35rc1", Version{1, 35, 0}, true},
		{"1.35.x", Version{1, 35, 0}, true},
		{"1.35.7.8", Version{1, 35, 7}, true},
		{"1.35.99999999999999999999", Version{}, false},
		{"V1.35", Version{}, false},
		{"vv1.35", Version{}, false},
		{"1.", Version{}, false},
		{"+1.35", Version{}, false},
		{"1a.35", Version{}, false},
	}
	for _, tc := range cases {
		got, ok := ParseVersion(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"v1.35.6", "1.34.9", "v1.35.5+k3s1", "v1.35", "", "v1", "vX.Y.Z", "1.35.0-rc.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseVersion(s)
		if !ok {
			if v != (Version{}) {
				t.Fatalf("ParseVersion(%q) failed but returned %v", s, v)
			}
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 {
			t.Fatalf("ParseVersion(%q) = %v has a negative part", s, v)
		}
		if again, ok := ParseVersion(v.String()); !ok || again != v {
			t.Fatalf("ParseVersion(%q) = %v does not round-trip: %v, %v", s, v, again, ok)
		}
		// A leading "v" changes nothing.
		if s == strings.TrimSpace(s) && !strings.HasPrefix(s, "v") {
			if withV, ok := ParseVersion("v" + s); !ok || withV != v {
				t.Fatalf("ParseVersion(v%q) = %v, %v; want %v", s, withV, ok, v)
			}
		}
		if v.compare(v) != 0 {
			t.Fatalf("%v does not equal itself", v)
		}
	})
}
