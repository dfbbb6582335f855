package status

import (
	"errors"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestAgo_UnitsAtTheirBoundaries(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s ago"},
		{59*time.Second + 999*time.Millisecond, "59s ago"},
		{time.Minute, "1m00s ago"},
		{time.Hour - time.Second, "59m59s ago"},
		{time.Hour, "1h00m ago"},
		{24*time.Hour - time.Minute, "23h59m ago"},
		{24 * time.Hour, "1d00h ago"},
		{-3 * time.Second, "in 3s (clocks disagree)"},
	}
	for _, tc := range cases {
		if got := Ago(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("Ago(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := Ago(time.Time{}, now); got != "never" {
		t.Errorf("Ago(zero) = %q, want never", got)
	}
}

func TestTable_OutcomeIsNeverOrTheAgeAndHowItWent(t *testing.T) {
	got := rendered(t, lines(func(tb *Table) {
		tb.Outcome("first", time.Time{}, "ok")
		tb.Outcome("second", now.Add(-90*time.Second), "503 Service Unavailable")
	}))
	want := "first:   never\nsecond:  1m30s ago, 503 Service Unavailable\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTable_LastErrorIsWrittenOnlyWhenThereIsOne(t *testing.T) {
	got := rendered(t, lines(func(tb *Table) {
		tb.LastError(time.Time{}, "")
		tb.LastError(now.Add(-5*time.Second), "HTTP 503")
		tb.Count("count", 42)
	}))
	want := "last error:  5s ago: HTTP 503\ncount:       42\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTable_ASectionAlignsApartFromTheLinesBeforeIt(t *testing.T) {
	got := rendered(t, lines(func(tb *Table) {
		tb.Line("a", "1")
		tb.Section()
		tb.Row("a much longer cell", "x")
		tb.Row("b", "y")
	}))
	want := "a:  1\n  a much longer cell  x\n  b                   y\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// failingWriter fails every write, as a closed stdout does.
type failingWriter struct{ n int }

func (f *failingWriter) Write([]byte) (int, error) {
	f.n++
	return 0, errors.New("stdout closed")
}

func TestRender_ReturnsTheFirstWriteErrorOfAnySection(t *testing.T) {
	w := &failingWriter{}
	err := Render(w, now, lines(func(tb *Table) {
		tb.Line("a", "1")
		tb.Section()
		tb.Line("b", "2")
	}))
	if err == nil || err.Error() != "stdout closed" {
		t.Errorf("Render = %v, want the writer's error", err)
	}
	if w.n != 2 {
		t.Errorf("%d writes, want 2 (one for each section)", w.n)
	}
}
