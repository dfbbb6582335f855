package main

import (
	"io"
	"strconv"
	"time"

	"kubehz.dev/agent/shared/status"
)

// Render prints the replica's state as aligned "key: value" lines, times as
// ages relative to now, then the current revision's reports, one per line.
func (a replicaState) Render(w io.Writer, now time.Time) error {
	t := status.NewTable(w, now)
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
	if err := t.Flush(); err != nil {
		return err
	}
	// A table of their own: their columns must not widen the keys above.
	r := status.NewTable(w, now)
	for _, rep := range a.Reports {
		detail := rep.Detail
		if detail == "" {
			detail = "-"
		}
		r.Row(rep.Action, rep.Pool, rep.Status, detail)
	}
	return r.Flush()
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
