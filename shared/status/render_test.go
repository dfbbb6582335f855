package status

import (
	"io"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestRender_ObserverFailingAndActorLive(t *testing.T) {
	o := Observer{
		Version: "v1.2.3", Started: now.Add(-2*time.Hour - 5*time.Minute), Written: now.Add(-time.Second), Beating: true,
		LastAttempt: now.Add(-12 * time.Second), LastOutcome: "HTTP 503",
		LastDelivered: now.Add(-4*time.Minute - 3*time.Second), FailingSince: now.Add(-3 * time.Minute),
		LastError: "platform answered 503 Service Unavailable", LastErrorAt: now.Add(-12 * time.Second),
		Caches: ObserverCaches{Nodes: 3, Pods: 42, WarningEvents: 5, Machines: 3, Pools: 1},
		Actor:  ActorLease{Holder: "actor-7d9f_0a1b2c3d", Live: true, Riding: 2},
	}
	want := `version:         v1.2.3
started:         2h05m ago
heartbeat:       sent by this observer
last beat:       12s ago, HTTP 503
last delivered:  4m03s ago
failing since:   3m00s ago
last error:      12s ago: platform answered 503 Service Unavailable
actor lease:     actor-7d9f_0a1b2c3d (live: 2 reports ride the beat)
nodes:           3
pods:            42
warning events:  5
machines:        3
pools:           1
state written:   1s ago
`
	assertRendered(t, o.Render, want)
}

func TestRender_ObserverStandingDownBeforeAnyBeat(t *testing.T) {
	o := Observer{Version: "dev", Started: now.Add(-3 * 24 * time.Hour), Written: now}
	want := `version:         dev
started:         3d00h ago
heartbeat:       standing down: the heartbeat-owner marker names the lok8s CronJob
last beat:       never
last delivered:  never
actor lease:     no holder (no actor running, or the actor tier is not installed)
nodes:           0
pods:            0
warning events:  0
machines:        0
pools:           0
state written:   0s ago
`
	assertRendered(t, o.Render, want)
}

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
