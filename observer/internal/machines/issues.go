package machines

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/wire"
)

const (
	// NodeJoinTimeout is the reason for a machine whose Node never joined.
	NodeJoinTimeout = "NodeJoinTimeout"
	// joinTimeout is fixed, deliberately not the healing policy's value.
	joinTimeout = 10 * time.Minute
	// retryWindow is how long a ReconcilingError Warning stands for a
	// loop still failing. machine-controller does not delete its Warnings
	// when a Machine recovers: they stay until the apiserver's event TTL
	// (an hour by default), so one failed reconcile during a roll would
	// otherwise be reported for an hour. A loop still failing repeats its
	// Warning well inside the window: controller-runtime backs a failing
	// object off to at most 1000 s, and client-go's event spam filter lets
	// a repeat through at least every 5 minutes.
	retryWindow = 20 * time.Minute
)

// Observed is what one pass reads. Machines nil means "not readable".
type Observed struct {
	Namespace   string // the MD namespace; only Machine events there count
	Machines    []*Machine
	Deployments []*MachineDeployment
	Events      []*cluster.Event
}

// IssueKey is an issue's identity; duplicates merge.
type IssueKey struct{ Pool, Machine, Reason string }

// Seen holds the agent-observed first-seen time of every current issue.
type Seen map[IssueKey]time.Time

// Issues computes the wire list for one pass at now, and the first-seen store
// for the next pass: a key keeps its time while it stays and is forgotten
// when it goes, so a recurrence is dated anew. The list is sorted oldest
// first (then pool, machine, reason), holds at most 20 entries, and is nil
// when empty so the key is omitted.
func Issues(o Observed, seen Seen, now time.Time) ([]wire.MachineIssue, Seen) {
	found := detect(o, now)
	next := make(Seen, len(found))
	type dated struct {
		since time.Time
		issue wire.MachineIssue
	}
	list := make([]dated, 0, len(found))
	stamp := now.UTC().Truncate(time.Second)
	for k, message := range found {
		first, ok := seen[k]
		if !ok {
			first = stamp
		}
		next[k] = first
		list = append(list, dated{first, wire.MachineIssue{
			Pool: k.Pool, Machine: k.Machine, Reason: k.Reason, Message: message,
			Since: first.Format(time.RFC3339),
		}})
	}
	slices.SortFunc(list, func(a, b dated) int {
		return cmp.Or(a.since.Compare(b.since),
			cmp.Compare(a.issue.Pool, b.issue.Pool),
			cmp.Compare(a.issue.Machine, b.issue.Machine),
			cmp.Compare(a.issue.Reason, b.issue.Reason))
	})
	if len(list) == 0 {
		return nil, next
	}
	out := make([]wire.MachineIssue, 0, min(len(list), wire.MaxMachineIssues))
	for _, d := range list[:min(len(list), wire.MaxMachineIssues)] {
		out = append(out, d.issue)
	}
	return out, next
}

// detect maps each current issue to its message, from non-deleting machines
// only: a terminal error, a Node that never joined, a retry loop.
func detect(o Observed, now time.Time) map[IssueKey]string {
	r := newResolver(o.Deployments)
	// Sorted so that keys which clamping merges keep the same message.
	machines := slices.Clone(o.Machines)
	slices.SortFunc(machines, func(a, b *Machine) int { return cmp.Compare(name(a), name(b)) })

	found := map[IssueKey]string{}
	pools := make(map[string]string, len(machines)) // live machine → pool
	var live []*Machine
	for _, m := range machines {
		if m == nil || m.Deleting || m.Name == "" {
			continue
		}
		pool := r.poolOrUnknown(m)
		pools[m.Name] = pool
		live = append(live, m)
		if m.ErrorReason != "" {
			add(found, pool, m.Name, m.ErrorReason, m.ErrorMessage)
		}
		if age := m.Age(now); !m.Joined && age >= joinTimeout {
			add(found, pool, m.Name, NodeJoinTimeout,
				fmt.Sprintf("machine has no Node %s after creation", age.Truncate(time.Minute)))
		}
	}
	loops := retryLoops(o.Events, o.Namespace, pools, now)
	for _, m := range live {
		if e, ok := loops[m.Name]; ok {
			add(found, pools[m.Name], m.Name, e.Reason, e.Message)
		}
	}
	return found
}

// retryLoops picks, per live machine, the newest ReconcilingError Warning on
// it seen within retryWindow: machine-controller's report of a failure it
// keeps retrying. Other Warning reasons are not machine issues (closing
// docs/contract.md#g-6), and an older Warning is a loop that ended.
func retryLoops(events []*cluster.Event, namespace string, live map[string]string, now time.Time) map[string]*cluster.Event {
	newest := map[string]*cluster.Event{}
	for _, e := range events {
		if e == nil || !e.Warning || e.Kind != cluster.MachineKind ||
			e.Reason != cluster.ReconcilingError || e.InvolvedNamespace != namespace ||
			now.Sub(e.LastSeen) > retryWindow {
			continue
		}
		if _, ok := live[e.InvolvedName]; !ok {
			continue
		}
		cur, ok := newest[e.InvolvedName]
		if !ok || e.LastSeen.After(cur.LastSeen) || (e.LastSeen.Equal(cur.LastSeen) && e.Name > cur.Name) {
			newest[e.InvolvedName] = e
		}
	}
	return newest
}

// add records one issue, clamped to the wire's bounds so it can never 400 a
// beat; an entry left without pool or reason is dropped, and the first
// source of a key wins.
func add(found map[IssueKey]string, pool, machine, reason, message string) {
	k := IssueKey{
		Pool:    wire.Clamp(pool, wire.MaxLabelLen),
		Machine: wire.Clamp(machine, wire.MaxNameLen),
		Reason:  wire.Clamp(reason, wire.MaxLabelLen),
	}
	if k.Pool == "" || k.Reason == "" {
		return
	}
	if _, ok := found[k]; !ok {
		found[k] = wire.Clamp(message, wire.MaxNoteLen)
	}
}

func name(m *Machine) string {
	if m == nil {
		return ""
	}
	return m.Name
}
