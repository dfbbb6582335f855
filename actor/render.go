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
	t := status.NewTable(w)
	t.Line("version", a.Version)
	t.Line("identity", a.Identity)
	t.Line("started", status.Ago(a.Started, now))
	t.Line("leading", a.leading())
	t.Line("lease holder", a.holder())
	t.Line("last poll", status.Outcome(a.LastPoll, now, a.LastPollOutcome))
	if a.LastError != "" {
		t.Line("last error", status.Ago(a.LastErrorAt, now)+": "+a.LastError)
	}
	t.Line("machine deployments", strconv.Itoa(a.Caches.MachineDeployments))
	t.Line("machines", strconv.Itoa(a.Caches.Machines))
	t.Line("nodes", strconv.Itoa(a.Caches.Nodes))
	t.Line("state written", status.Ago(a.Written, now))
	t.Line("revision", strconv.FormatInt(a.Revision, 10))
	t.Line("reports", strconv.Itoa(len(a.Reports)))
	if err := t.Flush(); err != nil {
		return err
	}
	// A table of their own: their columns must not widen the keys above.
	r := status.NewTable(w)
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
