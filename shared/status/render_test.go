package status

import (
	"strings"
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
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	tb := NewTable(&b, now)
	tb.Outcome("first", time.Time{}, "ok")
	tb.Outcome("second", now.Add(-90*time.Second), "503 Service Unavailable")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "first:   never\nsecond:  1m30s ago, 503 Service Unavailable\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTable_LastErrorIsWrittenOnlyWhenThereIsOne(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	tb := NewTable(&b, now)
	tb.LastError(time.Time{}, "")
	tb.LastError(now.Add(-5*time.Second), "HTTP 503")
	tb.Count("count", 42)
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "last error:  5s ago: HTTP 503\ncount:       42\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
