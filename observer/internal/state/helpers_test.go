package state

import (
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/status"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func assertRendered(t *testing.T, o Observer, want string) {
	t.Helper()
	var b strings.Builder
	if err := status.Render(&b, now, o); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", b.String(), want)
	}
}
