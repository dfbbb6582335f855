package machines

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

const since = "2026-07-06T12:00:00Z" // now, as a first-seen stamp

// The sources of docs/contract.md#machine-issues, with docs/contract.md#g-6
// closed: only ReconcilingError events are issues.
func TestIssues_Sources(t *testing.T) {
	mds := []*MachineDeployment{pool(t, "pool-a")}
	joinless := func(name string, age time.Duration) *Machine {
		return &Machine{Namespace: ns, Name: name, Labels: in("pool-a"), Created: now.Add(-age)}
	}
	deleting := failed(joined("m-del", in("pool-a")), "DeleteError", "stuck")
	deleting.Deleting = true
	long := strings.Repeat("x", 300)
	tweak := func(change func(*cluster.Event)) *cluster.Event {
		e := machineEvent("e", "m-1", "ReconcilingError", "x", now)
		change(e)
		return e
	}

	tests := []struct {
		name     string
		machines []*Machine
		events   []*cluster.Event
		want     []wire.MachineIssue
	}{
		{
			name:     "a terminal error on a joined machine: one issue, resolved pool, first-seen since",
			machines: []*Machine{failed(joined("m-1", in("pool-a")), "CreateError", "quota")},
			want:     []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "CreateError", Message: "quota", Since: since}},
		},
		{
			name:     "a terminal error with no message",
			machines: []*Machine{failed(joined("m-1", in("pool-a")), "InvalidConfiguration", "")},
			want:     []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "InvalidConfiguration", Since: since}},
		},
		{
			name:     "a ReconcilingError event on a live machine: the newest message wins",
			machines: []*Machine{joined("m-1", in("pool-a"))},
			events: []*cluster.Event{
				machineEvent("e-old", "m-1", "ReconcilingError", "old", now.Add(-time.Minute)),
				machineEvent("e-new", "m-1", "ReconcilingError", "unsupported location for server type", now),
				machineEvent("e-mid", "m-1", "ReconcilingError", "mid", now.Add(-30*time.Second)),
			},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "ReconcilingError",
				Message: "unsupported location for server type", Since: since}},
		},
		{
			// machine-controller leaves a Warning in place when the
			// Machine recovers (seen against v1.65.0: a roll's new
			// Machine logs "cloud config not ready" once, then joins).
			name:     "a ReconcilingError last seen 20 minutes ago still counts; a second older has ended",
			machines: []*Machine{joined("m-1", in("pool-a")), joined("m-2", in("pool-a"))},
			events: []*cluster.Event{
				machineEvent("e-1", "m-1", "ReconcilingError", "still failing", now.Add(-20*time.Minute)),
				machineEvent("e-2", "m-2", "ReconcilingError", "recovered", now.Add(-20*time.Minute-time.Second)),
			},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "ReconcilingError",
				Message: "still failing", Since: since}},
		},
		{
			name:     "an ended loop does not hide a newer Warning on the same machine",
			machines: []*Machine{joined("m-1", in("pool-a"))},
			events: []*cluster.Event{
				machineEvent("e-old", "m-1", "ReconcilingError", "old", now.Add(-time.Hour)),
				machineEvent("e-new", "m-1", "ReconcilingError", "new", now.Add(-time.Minute)),
			},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "ReconcilingError", Message: "new", Since: since}},
		},
		{
			name:     "an event for a machine that no longer exists is ignored",
			machines: []*Machine{joined("m-1", in("pool-a"))},
			events:   []*cluster.Event{machineEvent("e", "m-gone", "ReconcilingError", "x", now)},
		},
		{
			name:     "an event with another Warning reason is NOT an issue (G-6)",
			machines: []*Machine{joined("m-1", in("pool-a"))},
			events:   []*cluster.Event{machineEvent("e", "m-1", "FailedCreate", "x", now)},
		},
		{
			name:     "events elsewhere, on other kinds, not Warning, or on a deleting machine are ignored",
			machines: []*Machine{joined("m-1", in("pool-a")), deleting},
			events: []*cluster.Event{
				tweak(func(e *cluster.Event) { e.InvolvedNamespace = "other" }),
				tweak(func(e *cluster.Event) { e.Kind = "Node" }),
				tweak(func(e *cluster.Event) { e.Warning = false }),
				machineEvent("d", "m-del", "ReconcilingError", "x", now),
				nil,
			},
		},
		{
			name:     "NodeJoinTimeout fires at exactly 10 minutes",
			machines: []*Machine{joinless("m-1", 10*time.Minute)},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "NodeJoinTimeout",
				Message: "machine has no Node 10m0s after creation", Since: since}},
		},
		{
			name:     "NodeJoinTimeout truncates the age to minutes",
			machines: []*Machine{joinless("m-1", 72*time.Minute+59*time.Second)},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: "NodeJoinTimeout",
				Message: "machine has no Node 1h12m0s after creation", Since: since}},
		},
		{
			name:     "no NodeJoinTimeout one second early, once joined, or without a creation time",
			machines: []*Machine{joinless("m-1", 10*time.Minute-time.Second), joined("m-2", nil), {Name: "m-3"}},
		},
		{
			name:     "a deleting machine with an error gives no issue",
			machines: []*Machine{deleting},
		},
		{
			name:     "an unresolved machine goes under pool unknown",
			machines: []*Machine{failed(joined("m-1", in("pool-z")), "CreateError", "")},
			want:     []wire.MachineIssue{{Pool: "unknown", Machine: "m-1", Reason: "CreateError", Since: since}},
		},
		{
			name:     "oversized fields are clamped to the wire's bounds",
			machines: []*Machine{failed(joined("m-1", in("pool-a")), long, long)},
			want: []wire.MachineIssue{{Pool: "pool-a", Machine: "m-1", Reason: long[:63], Message: long[:256],
				Since: since}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Issues(Observed{Namespace: ns, Machines: tt.machines, Deployments: mds, Events: tt.events}, nil, now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Issues =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// docs/contract.md#machine-issues: since stays while the issue lasts and is
// forgotten when it goes.
func TestIssues_SinceStableAcrossPassesAndRecoveryForgets(t *testing.T) {
	m := failed(joined("m-1", in("pool-a")), "CreateError", "quota")
	o := Observed{Namespace: ns, Machines: []*Machine{m}, Deployments: []*MachineDeployment{pool(t, "pool-a")}}

	first, seen := Issues(o, nil, now.Add(400*time.Millisecond))
	later, seen := Issues(o, seen, now.Add(5*time.Minute))
	if len(first) != 1 || first[0].Since != since || !reflect.DeepEqual(later, first) {
		t.Fatalf("passes differ: first %+v, later %+v", first, later)
	}

	m.ErrorReason, m.ErrorMessage = "", ""
	cleared, seen := Issues(o, seen, now.Add(6*time.Minute))
	if cleared != nil || len(seen) != 0 {
		t.Fatalf("after recovery: issues %+v, first-seen %v; want nil and empty", cleared, seen)
	}

	m.ErrorReason = "CreateError"
	again, _ := Issues(o, seen, now.Add(7*time.Minute))
	if len(again) != 1 || again[0].Since != "2026-07-06T12:07:00Z" {
		t.Errorf("a recurrence = %+v, want since 2026-07-06T12:07:00Z", again)
	}
}

// docs/contract.md#machine-issues: thirty issues keep the twenty oldest, in a
// fixed order.
func TestIssues_ThirtyCappedAtTwentyOldestFirst(t *testing.T) {
	var machines []*Machine
	seen := Seen{}
	for i := range 30 {
		name := fmt.Sprintf("m-%02d", i)
		machines = append(machines, failed(joined(name, nil), "CreateError", ""))
		// Machines 10..29 were first seen a minute apart, newest first;
		// 0..9 share one time so the tie-break on the machine name shows.
		at := now.Add(-time.Hour)
		if i >= 10 {
			at = now.Add(-time.Duration(i) * time.Minute)
		}
		seen[IssueKey{Pool: "unknown", Machine: name, Reason: "CreateError"}] = at
	}
	o := Observed{Namespace: ns, Machines: machines}
	got, _ := Issues(o, seen, now)

	// The ten tied at one hour, by name, then the ten oldest of the rest.
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("m-%02d", i))
	}
	for i := 29; i >= 20; i-- {
		want = append(want, fmt.Sprintf("m-%02d", i))
	}
	var names []string
	for _, is := range got {
		names = append(names, is.Machine)
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("kept %v\nwant %v", names, want)
	}

	rand.Shuffle(len(machines), func(i, j int) { machines[i], machines[j] = machines[j], machines[i] })
	if again, _ := Issues(o, seen, now); !reflect.DeepEqual(again, got) {
		t.Error("the result depends on the input order")
	}
}
