package platform

import (
	"testing"
	"time"
)

func TestParseRetryAfter_SecondsDatesClampAndGarbage(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{name: "absent", value: "", want: 0},
		{name: "zero seconds", value: "0", want: 0},
		{name: "seconds", value: "120", want: 2 * time.Minute},
		{name: "seconds with padding", value: " 7 ", want: 7 * time.Second},
		{name: "exactly the cap", value: "300", want: 5 * time.Minute},
		{name: "one second over the cap", value: "301", want: 5 * time.Minute},
		{name: "a day clamped", value: "86400", want: 5 * time.Minute},
		{name: "overflowing number clamped", value: "99999999999999999999999", want: 5 * time.Minute},
		{name: "IMF date ahead", value: "Mon, 06 Jul 2026 12:01:30 GMT", want: 90 * time.Second},
		{name: "RFC 850 date ahead", value: "Monday, 06-Jul-26 12:00:10 GMT", want: 10 * time.Second},
		{name: "asctime date ahead", value: "Mon Jul  6 12:00:05 2026", want: 5 * time.Second},
		{name: "date at now", value: "Mon, 06 Jul 2026 12:00:00 GMT", want: 0},
		{name: "past date", value: "Mon, 06 Jul 2026 11:00:00 GMT", want: 0},
		{name: "far date clamped", value: "Tue, 07 Jul 2026 12:00:00 GMT", want: 5 * time.Minute},
		{name: "negative", value: "-5", want: 0},
		{name: "decimal", value: "1.5", want: 0},
		{name: "plus sign", value: "+5", want: 0},
		{name: "garbage", value: "soon", want: 0},
		{name: "duration text", value: "5m", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseRetryAfter(tt.value, now); got != tt.want {
				t.Errorf("parseRetryAfter(%q) = %s, want %s", tt.value, got, tt.want)
			}
		})
	}
}
