package token

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kubehz.dev/agent/shared/testkit"
)

// valid returns a distinct well-formed token per n.
func valid(n int) string { return fmt.Sprintf("khz_agt_%064x", n) }

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
