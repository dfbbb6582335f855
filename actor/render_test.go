package main

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"kubehz.dev/agent/shared/status"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestRender_LeadingActorListsItsReports(t *testing.T) {
	a := replicaState{
		Version: "v1.2.3", Identity: "actor-7d9f_0a1b2c3d", Started: now.Add(-10 * time.Minute), Written: now.Add(-2 * time.Second),
		Leading: true, LeaseHolder: "actor-7d9f_0a1b2c3d",
		LastPoll: now.Add(-8 * time.Second), LastPollOutcome: "new document", Revision: 7,
		Reports: []reportLine{
			{Action: "scale", Pool: "workers", Status: "done", Detail: "2 → 3 replicas"},
			{Action: "heal", Pool: "worker-node-1", Status: "in_progress"},
		},
		Caches: cacheSizes{MachineDeployments: 2, Machines: 3, Nodes: 3},
	}
	want := `version:              v1.2.3
identity:             actor-7d9f_0a1b2c3d
started:              10m00s ago
leading:              yes
lease holder:         actor-7d9f_0a1b2c3d
last poll:            8s ago, new document
machine deployments:  2
machines:             3
nodes:                3
state written:        2s ago
revision:             7
reports:              2
  scale  workers        done         2 → 3 replicas
  heal   worker-node-1  in_progress  -
`
	assertRendered(t, a, want)
}

func TestRender_StandbyActorNamesTheLeaderAndItsLastError(t *testing.T) {
	a := replicaState{Version: "dev", Identity: "actor-b_01", Started: now.Add(-time.Minute), Written: now,
		LeaseHolder: "actor-a_02", LastError: "lease: connection refused", LastErrorAt: now.Add(-30 * time.Second)}
	want := `version:              dev
identity:             actor-b_01
started:              1m00s ago
leading:              no (standby)
lease holder:         actor-a_02
last poll:            never
last error:           30s ago: lease: connection refused
machine deployments:  0
machines:             0
nodes:                0
state written:        0s ago
revision:             0
reports:              0
`
	assertRendered(t, a, want)
}

func assertRendered(t *testing.T, a replicaState, want string) {
	t.Helper()
	var b strings.Builder
	if err := status.Render(&b, now, a); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", b.String(), want)
	}
}

// hostile is what a platform document or a MachineDeployment field could
// carry into a report or an error: an OSC title change, a C1 CSI that
// clears the screen, a right-to-left override, a carriage return that
// overwrites the line and a newline that forges one.
const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\n\tlast error: none"

// escapedHostile is hostile as `actor status` prints it.
const escapedHostile = `v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\n\tlast error: none`

func TestRender_ShowsHostileTextEscaped(t *testing.T) {
	a := replicaState{Version: hostile, Identity: hostile, Started: now, Written: now, LeaseHolder: hostile,
		LastPoll: now, LastPollOutcome: hostile, LastError: hostile, LastErrorAt: now,
		Reports: []reportLine{{Action: hostile, Pool: hostile, Status: hostile, Detail: hostile}}}
	var b strings.Builder
	if err := status.Render(&b, now, a); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range out {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Fatalf("output holds %U:\n%q", r, out)
		}
	}
	if got := strings.Count(out, "\n"); got != 14 {
		t.Errorf("output has %d lines, want 14 (a newline in a value forged one):\n%s", got, out)
	}
	// Every field that carried it, escaped the same way.
	if n := strings.Count(out, escapedHostile); n != 9 {
		t.Errorf("the escaped text appears %d times, want 9 (version, identity, holder, poll, error, four report fields):\n%s", n, out)
	}
}
