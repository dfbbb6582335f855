package state

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"kubehz.dev/agent/shared/status"
)

func TestRender_FailingAndActorLive(t *testing.T) {
	o := Observer{
		Version: "v1.2.3", Started: now.Add(-2*time.Hour - 5*time.Minute), Written: now.Add(-time.Second), Beating: true,
		LastAttempt: now.Add(-12 * time.Second), LastOutcome: "HTTP 503",
		LastDelivered: now.Add(-4*time.Minute - 3*time.Second), FailingSince: now.Add(-3 * time.Minute),
		LastError: "platform answered 503 Service Unavailable", LastErrorAt: now.Add(-12 * time.Second),
		Caches: Caches{Nodes: 3, Pods: 42, WarningEvents: 5, Machines: 3, Pools: 1},
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
	assertRendered(t, o, want)
}

func TestRender_StandingDownBeforeAnyBeat(t *testing.T) {
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
	assertRendered(t, o, want)
}

// hostile is what an error or a Lease holder could carry into the state:
// an OSC title change, a C1 CSI that clears the screen, a right-to-left
// override, a carriage return that overwrites the line and a newline that
// forges one.
const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\n\tlast error: none"

// escapedHostile is hostile as `observer status` prints it.
const escapedHostile = `v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\n\tlast error: none`

func TestRender_ShowsHostileTextEscaped(t *testing.T) {
	o := Observer{Version: hostile, Started: now, Written: now, LastAttempt: now, LastOutcome: hostile,
		LastError: hostile, LastErrorAt: now, Actor: ActorLease{Holder: hostile, Live: true}}
	var b strings.Builder
	if err := status.Render(&b, now, o); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range out {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Fatalf("output holds %U:\n%q", r, out)
		}
	}
	if got := strings.Count(out, "\n"); got != 13 {
		t.Errorf("output has %d lines, want 13 (a newline in a value forged one):\n%s", got, out)
	}
	if n := strings.Count(out, escapedHostile); n != 4 {
		t.Errorf("the escaped text appears %d times, want 4 (version, last beat, last error, actor lease):\n%s", n, out)
	}
}
