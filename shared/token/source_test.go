package token

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSource_ResolutionOrder(t *testing.T) {
	malformed := "khz_agt_" + strings.Repeat("A", 64)
	cases := []struct {
		name       string
		env        string
		file       *string // nil: no file; the path is a directory when dir is set
		dir        bool
		secret     string
		secretErr  error
		noSecret   bool
		want       string
		wantErr    bool
		malformed  bool // the error must wrap ErrMalformed: exit code 2
		wantSecret int
	}{
		{name: "env wins", env: valid(1), file: ptr(valid(2)), secret: valid(3), want: valid(1)},
		{name: "env malformed is fatal", env: malformed, file: ptr(valid(2)), wantErr: true, malformed: true},
		{name: "file trailing newline trimmed", file: ptr(valid(2) + "\n"), secret: valid(3), want: valid(2)},
		{name: "file missing falls through", secret: valid(3), want: valid(3), wantSecret: 1},
		{name: "file blank falls through", file: ptr(" \n"), secret: valid(3), want: valid(3), wantSecret: 1},
		{name: "file read error falls through", dir: true, secret: valid(3), want: valid(3), wantSecret: 1},
		{name: "file malformed is fatal", file: ptr(malformed + "\n"), secret: valid(3), wantErr: true, malformed: true},
		{name: "file claim code is fatal", file: ptr("khzc_" + strings.Repeat("a", 64)), wantErr: true, malformed: true},
		{name: "secret trimmed", secret: "\t" + valid(3) + "\n", want: valid(3), wantSecret: 1},
		{name: "secret malformed", secret: malformed, wantErr: true, malformed: true, wantSecret: 1},
		{name: "file blank and secret malformed", file: ptr("\n"), secret: "khz_agt_short", wantErr: true, malformed: true, wantSecret: 1},
		{name: "secret get fails", secretErr: errors.New("forbidden"), wantErr: true, wantSecret: 1},
		{name: "no file and no secret", noSecret: true, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tokenPath(t)
			switch {
			case tc.dir:
				path = t.TempDir()
			case tc.file != nil:
				writeAt(t, path, *tc.file, epoch)
			}
			fs := &fakeSecret{val: tc.secret, err: tc.secretErr}
			read := fs.read
			if tc.noSecret {
				read = nil
			}
			log, logs := testLogger()
			got, err := NewSource(path, Options{FromEnv: Token(tc.env), Secret: read, Log: log}).Token(context.Background())
			if tc.wantErr {
				if err == nil {
					t.Fatal("Token succeeded, want an error")
				}
				if strings.Contains(err.Error(), malformed) || strings.Contains(logs.String(), malformed) {
					t.Fatalf("error or log echoes the token: %v", err)
				}
				if errors.Is(err, ErrMalformed) != tc.malformed {
					t.Fatalf("errors.Is(%v, ErrMalformed) = %t, want %t", err, !tc.malformed, tc.malformed)
				}
			} else if err != nil || got.Reveal() != tc.want {
				t.Fatalf("Token = %v, %v", got.Reveal(), err)
			}
			if n := fs.count(); n != tc.wantSecret {
				t.Fatalf("Secret read %d times, want %d", n, tc.wantSecret)
			}
		})
	}
}

func TestSource_InvalidateForcesReread(t *testing.T) {
	cases := []struct {
		name string
		// change swaps the token behind the Source's back without changing
		// anything a stat would notice.
		change func(t *testing.T, path string, fs *fakeSecret)
	}{
		{name: "file", change: func(t *testing.T, path string, _ *fakeSecret) { writeAt(t, path, valid(2), epoch) }},
		{name: "secret", change: func(_ *testing.T, _ string, fs *fakeSecret) { fs.set(valid(2), nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tokenPath(t)
			fs := &fakeSecret{val: valid(1)}
			if tc.name == "file" {
				writeAt(t, path, valid(1), epoch)
			}
			s := NewSource(path, Options{Secret: fs.read})
			mustToken(t, s, valid(1))
			tc.change(t, path, fs)
			mustToken(t, s, valid(1)) // cached
			s.Invalidate()
			mustToken(t, s, valid(2))
		})
	}
}

func TestSource_SecretRereadFailureKeepsLastGood(t *testing.T) {
	fs := &fakeSecret{val: valid(1)}
	log, logs := testLogger()
	s := NewSource(tokenPath(t), Options{Secret: fs.read, Log: log})
	mustToken(t, s, valid(1))
	fs.set("", errors.New("apiserver down"))
	s.Invalidate()
	mustToken(t, s, valid(1))
	if !strings.Contains(logs.String(), "apiserver down") {
		t.Fatalf("no warning logged: %s", logs)
	}
}

// The file comes before the Secret: one that was blank at start (kubelet
// can show it so mid-rotation) takes over once it holds a token, without a
// 401 first; a malformed version leaves the Secret's token in use.
func TestSource_AFileThatFillsAfterStartTakesOverFromTheSecret(t *testing.T) {
	path := tokenPath(t)
	writeAt(t, path, "\n", epoch)
	fs := &fakeSecret{val: valid(1)}
	log, logs := testLogger()
	s := NewSource(path, Options{Secret: fs.read, Log: log})
	mustToken(t, s, valid(1))

	writeAt(t, path, "not a token", epoch.Add(time.Second))
	mustToken(t, s, valid(1))
	if n := logs.Count("Keeping the last good agent token"); n != 1 {
		t.Errorf("%d warnings for a malformed file, want 1", n)
	}
	mustToken(t, s, valid(1))
	if n := logs.Count("Keeping the last good agent token"); n != 1 {
		t.Errorf("%d warnings after reading the same malformed version again, want 1", n)
	}

	writeAt(t, path, valid(2), epoch.Add(2*time.Second))
	mustToken(t, s, valid(2))
	fs.set(valid(3), nil)
	mustToken(t, s, valid(2)) // the file's, not the Secret's
}

func TestSource_WaiterHonoursContext(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(context.Context) (string, error) {
		close(started)
		<-release
		return valid(1), nil
	}
	s := NewSource(tokenPath(t), Options{Secret: slow})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = s.Token(context.Background()) })
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Token(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Token = %v, want context.Canceled", err)
	}
	close(release)
	wg.Wait()
}

func TestSource_ConcurrentUse(t *testing.T) {
	path := tokenPath(t)
	writeAt(t, path, valid(1), epoch)
	s := NewSource(path, Options{Secret: (&fakeSecret{val: valid(9)}).read})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if i%4 == 0 {
					s.Invalidate()
				}
				if _, err := s.Token(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func ptr(s string) *string { return &s }

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
			s := NewSource(path, Options{Secret: fs.read})
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
			s := NewSource(path, Options{Secret: (&fakeSecret{val: valid(9)}).read, Log: log})
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
