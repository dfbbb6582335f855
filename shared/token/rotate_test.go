package token

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubelet publishes a Secret volume as dir/..2026_xx/<key>, points dir/..data
// at that directory, and links dir/<key> to ..data/<key>. Rotation writes a
// new timestamped directory and renames a fresh ..data link over the old one.
func kubeletMount(t *testing.T, dir, version, content string, mtime time.Time) string {
	t.Helper()
	ts := filepath.Join(dir, version)
	if err := os.Mkdir(ts, 0o700); err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(ts, "agent-token"), content, mtime)
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "agent-token")
	if _, err := os.Lstat(link); os.IsNotExist(err) {
		if err := os.Symlink(filepath.Join("..data", "agent-token"), link); err != nil {
			t.Fatal(err)
		}
	}
	return link
}

func TestSource_PicksUpRotation(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string) string
		rotate func(t *testing.T, dir, path string)
	}{
		{
			name: "rewrite in place with a new mtime",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "agent-token")
				writeAt(t, p, valid(1)+"\n", epoch)
				return p
			},
			rotate: func(t *testing.T, _, p string) { writeAt(t, p, valid(2)+"\n", epoch.Add(time.Second)) },
		},
		{
			name: "rename over, same size and mtime",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "agent-token")
				writeAt(t, p, valid(1), epoch)
				return p
			},
			rotate: func(t *testing.T, dir, p string) {
				tmp := filepath.Join(dir, "new")
				writeAt(t, tmp, valid(2), epoch)
				if err := os.Rename(tmp, p); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "kubelet symlink swap, same size and mtime",
			setup: func(t *testing.T, dir string) string {
				return kubeletMount(t, dir, "..2026_07_06_12_00_00.1", valid(1), epoch)
			},
			rotate: func(t *testing.T, dir, _ string) {
				kubeletMount(t, dir, "..2026_07_06_13_00_00.2", valid(2), epoch)
				if err := os.RemoveAll(filepath.Join(dir, "..2026_07_06_12_00_00.1")); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			fs := &fakeSecret{val: valid(9)}
			s := NewSource("", path, fs.read, nil)
			mustToken(t, s, valid(1))
			tc.rotate(t, dir, path)
			mustToken(t, s, valid(2))
			if fs.count() != 0 {
				t.Fatal("the Secret was read although the file was fine")
			}
		})
	}
}

func TestSource_BadRotationKeepsLastGoodAndWarnsOnce(t *testing.T) {
	malformed := "khz_agt_" + strings.Repeat("F", 64)
	cases := []struct {
		name  string
		spoil func(t *testing.T, path string)
		want  string // in the single warning
	}{
		{name: "malformed", spoil: func(t *testing.T, p string) { writeAt(t, p, malformed, epoch.Add(time.Second)) }, want: "hex"},
		{name: "blank", spoil: func(t *testing.T, p string) { writeAt(t, p, "\n", epoch.Add(time.Second)) }, want: "blank"},
		{name: "vanished", spoil: func(t *testing.T, p string) { _ = os.Remove(p) }, want: "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tokenPath(t)
			writeAt(t, path, valid(1), epoch)
			log, logs := testLogger()
			s := NewSource("", path, (&fakeSecret{val: valid(9)}).read, log)
			mustToken(t, s, valid(1))
			tc.spoil(t, path)
			for range 3 {
				mustToken(t, s, valid(1))
			}
			if n := strings.Count(logs.String(), "Keeping the last good agent token"); n != 1 {
				t.Fatalf("%d warnings, want 1: %s", n, logs)
			}
			if !strings.Contains(logs.String(), tc.want) || strings.Contains(logs.String(), malformed) {
				t.Fatalf("warning should say %q and never echo the token: %s", tc.want, logs)
			}
			writeAt(t, path, valid(2), epoch.Add(2*time.Second))
			mustToken(t, s, valid(2))
		})
	}
}
