// Package replica is what `actor status` shows of one actor replica: the
// state the running replica keeps in its status file (the file's format is
// shared/status), and how it is printed. Only the actor writes and reads it.
package replica

import (
	"time"

	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

// State is what the running actor replica last knew about itself.
type State struct {
	Version  string    `json:"version"`
	Identity string    `json:"identity"`
	Started  time.Time `json:"started"`
	Written  time.Time `json:"written"`

	Leading     bool   `json:"leading"`
	LeaseHolder string `json:"leaseHolder,omitempty"`

	// LastPoll is when the last /desired request ended, and LastPollOutcome
	// how: "new document", "unchanged", "invalid document", "HTTP 503",
	// "error".
	LastPoll        time.Time `json:"lastPoll,omitzero"`
	LastPollOutcome string    `json:"lastPollOutcome,omitempty"`

	// Revision and Reports are the current revision's action reports as
	// last published to the observer.
	Revision int64    `json:"revision"`
	Reports  []Report `json:"reports,omitempty"`

	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`

	Caches Caches `json:"caches"`
}

// Report is one action report.
type Report struct {
	Action string `json:"action"`
	Pool   string `json:"pool"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Caches are the sizes of the leader's on-demand caches; zero on a
// standby and for a capability that is not authorized.
type Caches struct {
	MachineDeployments int `json:"machineDeployments"`
	Machines           int `json:"machines"`
	Nodes              int `json:"nodes"`
}

// ReportsFrom converts the published actions, at most wire.MaxActions of
// them, as the hand-off carries no more.
func ReportsFrom(actions []wire.Action) []Report {
	actions = actions[:min(len(actions), wire.MaxActions)]
	out := make([]Report, 0, len(actions))
	for _, a := range actions {
		out = append(out, Report{Action: a.Type, Pool: a.Target, Status: a.Status, Detail: a.Detail})
	}
	return out
}

// Clamp bounds every free text and the number of reports.
func (a State) Clamp() State {
	a.Version = wire.Clamp(a.Version, wire.MaxVersionLen)
	a.Identity = wire.Clamp(a.Identity, wire.MaxNameLen)
	a.LeaseHolder = wire.Clamp(a.LeaseHolder, wire.MaxNameLen)
	a.LastPollOutcome = wire.Clamp(a.LastPollOutcome, wire.MaxLabelLen)
	a.LastError = wire.Clamp(a.LastError, status.MaxErrorLen)
	if len(a.Reports) == 0 {
		a.Reports = nil
		return a
	}
	reports := make([]Report, 0, min(len(a.Reports), wire.MaxActions))
	for _, r := range a.Reports[:min(len(a.Reports), wire.MaxActions)] {
		reports = append(reports, Report{
			Action: wire.Clamp(r.Action, wire.MaxLabelLen), Pool: wire.Clamp(r.Pool, wire.MaxNameLen),
			Status: wire.Clamp(r.Status, wire.MaxLabelLen), Detail: wire.Clamp(r.Detail, wire.MaxNoteLen),
		})
	}
	a.Reports = reports
	return a
}

// Read reads a replica's state file.
func Read(path string) (State, error) { return status.Read[State](path) }

// Decode decodes a replica's state file's bytes.
func Decode(b []byte) (State, error) { return status.Decode[State](b) }
