package heal

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

// MaxUnwedgePods bounds the pods one unwedge force-deletes.
const MaxUnwedgePods = 100

// Pod is the compact record of one pod on a tracked node.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	NodeName        string
	Terminating     bool // metadata.deletionTimestamp is set
}

// Due reads the tracked machines against the observed cluster
// (docs/contract.md#heal-unwedge). It returns the machines to stop tracking
// (gone, or replaced under the same name) and, sorted, those whose node's pods
// must be read now: deleted at least timeout ago, never unwedged, and their
// node still there with a Ready condition that is not True. A node with no
// Ready condition at all is not known to be unreachable, so nothing is
// force-deleted on it. A node that is Ready, or gone (pod GC takes over), is
// skipped without using up the attempt, so it can still fire if the node drops
// again.
func Due(mem *Memory, o Observed, timeout time.Duration, now time.Time) (drop, due []string) {
	live := make(map[string]Machine, len(o.Machines))
	for _, m := range o.Machines {
		live[m.Name] = m
	}
	for name, t := range mem.Tracked {
		m, ok := live[name]
		switch {
		case !ok || m.UID != t.UID:
			drop = append(drop, name)
		case !m.Deleting:
			// A deletionTimestamp is never taken back: the read lags the
			// delete. Keep following it.
		case t.Attempted || t.Node == "" || now.Sub(t.DeletedAt) < timeout:
		default:
			n, ok := o.Nodes[t.Node]
			if ok && n.Ready != ReadyTrue && n.Ready != "" {
				due = append(due, name)
			}
		}
	}
	slices.Sort(drop)
	slices.Sort(due)
	return drop, due
}

// Stuck picks the pods to force-delete from those listed on node: bound to
// it and already Terminating, by namespace then name, at most
// MaxUnwedgePods. A pod that is not Terminating was never asked to leave and
// is never touched.
func Stuck(pods []Pod, node string) []Pod {
	var out []Pod
	for _, p := range pods {
		if p.NodeName == node && p.Terminating {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if len(out) > MaxUnwedgePods {
		out = out[:MaxUnwedgePods]
	}
	return out
}

// Unwedged is the heal report, still done, after the unwedge force-deleted
// deleted pods (failed more could not be, and left more were not tried:
// the node no longer read unreachable).
func Unwedged(machine string, t *Tracked, deleted, failed, left int, now time.Time, rev int64) wire.Action {
	detail := fmt.Sprintf("deleted Machine (%s); eviction unwedged after %s: force-deleted %d pod(s) stuck Terminating on unreachable node %s",
		t.Cause, round(now.Sub(t.DeletedAt)), deleted, t.Node)
	if failed > 0 {
		detail += fmt.Sprintf(" (%d failed)", failed)
	}
	if left > 0 {
		detail += fmt.Sprintf(" (%d left: the node no longer reads unreachable)", left)
	}
	return action(machine, wire.StatusDone, detail, rev)
}

// UnwedgeForbidden is the heal report, still done, when the pod read or a
// delete was forbidden, after deleted pods were force-deleted: the unwedge
// is not retried. A 403 is most often the Role, but an admission policy
// answers one too.
func UnwedgeForbidden(machine string, t *Tracked, verb string, deleted int, now time.Time, rev int64) wire.Action {
	before := ""
	if deleted > 0 {
		before = fmt.Sprintf(", %d pod(s) force-deleted before", deleted)
	}
	return action(machine, wire.StatusDone, fmt.Sprintf(
		"deleted Machine (%s); eviction unwedge forbidden after %s%s (RBAC: deploy/actor's ClusterRole must grant %s on pods, or an admission policy); node %s left to drain",
		t.Cause, round(now.Sub(t.DeletedAt)), before, verb, t.Node), rev)
}
