package token

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"kubehz.dev/agent/shared/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// valid returns a distinct well-formed token per n.
func valid(n int) string { return fmt.Sprintf("khz_agt_%064x", n) }

// fakeSecret stands in for the API fallback and counts GETs.
type fakeSecret struct {
	mu    sync.Mutex
	val   string
	err   error
	calls int
}

func (f *fakeSecret) set(val string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.val, f.err = val, err
}

func (f *fakeSecret) read(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.val, f.err
}

func (f *fakeSecret) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// epoch is a fixed file time; tests set mtimes explicitly because two
// writes within one kernel clock tick can otherwise share an mtime.
var epoch = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

func writeAt(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func testLogger() (*slog.Logger, *testkit.Logs) {
	b := &testkit.Logs{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func mustToken(t *testing.T, s *Source, want string) {
	t.Helper()
	got, err := s.Token(context.Background())
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	if got.Reveal() != want {
		t.Fatalf("Token = %s…, want %s…", got.Reveal()[:12], want[:12])
	}
}

func tokenPath(t *testing.T) string { return filepath.Join(t.TempDir(), "agent-token") }
