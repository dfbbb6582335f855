package main

import (
	"strconv"

	"kubehz.dev/agent/shared/status"
)

// Render lists the replica's state, then the current revision's reports,
// one per row.
func (a replicaState) Render(t *status.Table) {
	t.Line("version", a.Version)
	t.Line("identity", a.Identity)
	t.Age("started", a.Started)
	t.Line("leading", a.leading())
	t.Line("lease holder", a.holder())
	t.Outcome("last poll", a.LastPoll, a.LastPollOutcome)
	t.LastError(a.LastErrorAt, a.LastError)
	t.Count("machine deployments", a.Caches.MachineDeployments)
	t.Count("machines", a.Caches.Machines)
	t.Count("nodes", a.Caches.Nodes)
	t.Age("state written", a.Written)
	t.Line("revision", strconv.FormatInt(a.Revision, 10))
	t.Count("reports", len(a.Reports))
	t.Section() // the rows' columns must not widen the keys above
	for _, rep := range a.Reports {
		detail := rep.Detail
		if detail == "" {
			detail = "-"
		}
		t.Row(rep.Action, rep.Pool, rep.Status, detail)
	}
}

func (a replicaState) leading() string {
	if a.Leading {
		return "yes"
	}
	return "no (standby)"
}

func (a replicaState) holder() string {
	if a.LeaseHolder == "" {
		return "none seen"
	}
	return a.LeaseHolder
}
