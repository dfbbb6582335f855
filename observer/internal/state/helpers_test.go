package state

import (
	"io"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func assertRendered(t *testing.T, render func(w io.Writer, now time.Time) error, want string) {
	t.Helper()
	var b strings.Builder
	if err := render(&b, now); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", b.String(), want)
	}
}
