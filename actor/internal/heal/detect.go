package heal

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Unlinked is a Machine past its startup window with no status.nodeRef
// whose Node has joined all the same and is not unhealthy: machine-controller
// has not linked them yet. It is reported and left alone, since deleting it
// would take away a working server.
type Unlinked struct {
	Machine string
	Detail  string
}

// Detect finds the candidates, by machine name, the unhealthy worker nodes
// that belong to no Machine, and the unlinked Machines. Deleting machines
// are never candidates, and control-plane machines and nodes are skipped
// without a report.
//
// A Node belongs to a Machine when the Machine's status.nodeRef names it,
// or, while the Machine has none, when the Node bears machine-controller's
// marks for it and no nodeRef names it (ownedBy). Such a Machine is judged by its Node, and only
// once past its startup window: a Node that is unhealthy for unhealthyAfter
// makes it a candidate, any other makes it Unlinked.
func Detect(o Observed, p Policy, now time.Time) ([]Candidate, []string, []Unlinked) {
	backing := map[string]Machine{} // node → its live Machine, first by name
	known := map[string]bool{}      // nodes that belong to any Machine, deleting or not
	machines := slices.Clone(o.Machines)
	slices.SortFunc(machines, func(a, b Machine) int { return cmp.Compare(a.Name, b.Name) })
	marks := indexMarks(o)
	found := map[string]Candidate{}
	var unlinked []Unlinked
	for _, m := range machines {
		if m.NodeName != "" {
			known[m.NodeName] = true
			if _, ok := backing[m.NodeName]; !ok && !m.Deleting {
				backing[m.NodeName] = m
			}
			continue
		}
		owned := marks.ownedBy(o, m)
		for _, n := range owned {
			known[n.Name] = true
		}
		if m.Deleting || m.Created.IsZero() || m.ControlPlane {
			continue
		}
		age := now.Sub(m.Created)
		if age <= 0 || age < p.StartupTimeout {
			continue
		}
		if len(owned) == 0 {
			found[m.Name] = Candidate{Machine: m, Cause: fmt.Sprintf(
				"no node joined within %s of creation (nodeStartupTimeout %s)", round(age), round(p.StartupTimeout))}
			continue
		}
		if c, ok := judgedByItsNode(m, owned, p, now); ok {
			found[m.Name] = c
		} else if u, ok := notJoinless(m, owned, p, now); ok {
			unlinked = append(unlinked, u)
		}
	}
	var unbacked []string
	for _, n := range o.Nodes {
		if !unhealthyWorker(n, p, now) {
			continue
		}
		m, ok := backing[n.Name]
		if !ok {
			if !known[n.Name] {
				unbacked = append(unbacked, n.Name)
			}
			continue
		}
		if m.ControlPlane {
			continue
		}
		found[m.Name] = nodeCandidate(m, n, p, now)
	}
	slices.Sort(unbacked)
	cands := make([]Candidate, 0, len(found))
	for _, c := range found {
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b Candidate) int { return cmp.Compare(a.Machine.Name, b.Machine.Name) })
	return cands, unbacked, unlinked
}

// notReadyWorkers names every worker Node whose Ready condition is not True,
// for however short a time: still in its window or past it, behind a
// Machine already being deleted or behind none. The storm brake counts them
// all: an outage spreads its Ready transitions over seconds, and so across
// passes, and a brake that counted only the Nodes past their window and not
// yet deleting would let each pass delete a few of an outage it would trip
// on as a whole.
func notReadyWorkers(o Observed) map[string]bool {
	marks := indexMarks(o)
	cp := map[string]bool{}
	for _, m := range o.Machines {
		switch {
		case !m.ControlPlane:
		case m.NodeName != "":
			cp[m.NodeName] = true
		default:
			for _, n := range marks.ownedBy(o, m) {
				cp[n.Name] = true
			}
		}
	}
	down := map[string]bool{}
	for _, n := range o.Nodes {
		if n.Ready != ReadyTrue && n.Ready != "" && !n.ControlPlane && !cp[n.Name] {
			down[n.Name] = true
		}
	}
	return down
}

// unhealthyWorker says n is a worker whose Ready condition has not been
// True for at least unhealthyAfter. A node with no Ready condition, or no
// transition time, has an unknown duration and never is.
func unhealthyWorker(n Node, p Policy, now time.Time) bool {
	return n.Ready != ReadyTrue && n.Ready != "" && !n.Since.IsZero() && !n.ControlPlane &&
		now.Sub(n.Since) >= p.UnhealthyAfter
}

func nodeCandidate(m Machine, n Node, p Policy, now time.Time) Candidate {
	state := "NotReady"
	if n.Ready == ReadyUnknown {
		state = "Unknown"
	}
	return Candidate{Machine: m, Node: n.Name, Since: n.Since, Cause: fmt.Sprintf(
		"node %s %s for %s (unhealthyAfter %s)", n.Name, state, round(now.Sub(n.Since)), round(p.UnhealthyAfter))}
}

// judgedByItsNode makes an unlinked Machine a candidate when every Node
// bearing its marks is an unhealthy worker; the first by name stands behind
// it, so the delete re-reads that Node and the unwedge follows it.
func judgedByItsNode(m Machine, owned []Node, p Policy, now time.Time) (Candidate, bool) {
	for _, n := range owned {
		if !unhealthyWorker(n, p, now) {
			return Candidate{}, false
		}
	}
	return nodeCandidate(m, owned[0], p, now), true
}

// notJoinless is the report of a Machine whose Node joined but is not
// unhealthy: the first such Node by name, and the mark that ties it to the
// Machine. A control-plane Node is skipped silently, as it is when a
// nodeRef names it. The text holds no duration, so it reads the same on
// every pass.
func notJoinless(m Machine, owned []Node, p Policy, now time.Time) (Unlinked, bool) {
	for _, n := range owned {
		if n.ControlPlane {
			return Unlinked{}, false
		}
	}
	for _, n := range owned {
		if unhealthyWorker(n, p, now) {
			continue
		}
		state := map[string]string{ReadyTrue: "Ready", ReadyFalse: "NotReady", ReadyUnknown: "Unknown", "": "without a Ready condition"}[n.Ready]
		if state == "" {
			state = "Ready status " + n.Ready
		}
		return Unlinked{Machine: m.Name, Detail: fmt.Sprintf(
			"waiting: Machine has no status.nodeRef, but node %s (%s) has joined and is %s; "+
				"not deleting a server that may be working before machine-controller links them", n.Name, markOf(m, n), state)}, true
	}
	return Unlinked{}, false
}
