package main

// A replica's state is what `actor status` shows of it, kept in the replica's
// status file (format: shared/status); render.go prints it. Only the actor
// writes and reads it.

import (
	"time"

	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

// replicaState is what the running actor replica last knew about itself.
type replicaState struct {
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
	Revision int64        `json:"revision"`
	Reports  []reportLine `json:"reports,omitempty"`

	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`

	Caches cacheSizes `json:"caches"`
}

// reportLine is one action report.
type reportLine struct {
	Action string `json:"action"`
	Pool   string `json:"pool"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// cacheSizes are the sizes of the leader's on-demand caches; zero on a
// standby and for a capability that is not authorized.
type cacheSizes struct {
	MachineDeployments int `json:"machineDeployments"`
	Machines           int `json:"machines"`
	Nodes              int `json:"nodes"`
}

// reportsFrom converts the published actions, at most wire.MaxActions of
// them, as the hand-off carries no more.
func reportsFrom(actions []wire.Action) []reportLine {
	actions = actions[:min(len(actions), wire.MaxActions)]
	out := make([]reportLine, 0, len(actions))
	for _, a := range actions {
		out = append(out, reportLine{Action: a.Type, Pool: a.Target, Status: a.Status, Detail: a.Detail})
	}
	return out
}

// Clamp bounds every free text and the number of reports.
func (a replicaState) Clamp() replicaState {
	a.Version = wire.Clamp(a.Version, wire.MaxVersionLen)
	a.Identity = wire.Clamp(a.Identity, wire.MaxNameLen)
	a.LeaseHolder = wire.Clamp(a.LeaseHolder, wire.MaxNameLen)
	a.LastPollOutcome = wire.Clamp(a.LastPollOutcome, wire.MaxLabelLen)
	a.LastError = wire.Clamp(a.LastError, status.MaxErrorLen)
	if len(a.Reports) == 0 {
		a.Reports = nil
		return a
	}
	reports := make([]reportLine, 0, min(len(a.Reports), wire.MaxActions))
	for _, r := range a.Reports[:min(len(a.Reports), wire.MaxActions)] {
		reports = append(reports, reportLine{
			Action: wire.Clamp(r.Action, wire.MaxLabelLen), Pool: wire.Clamp(r.Pool, wire.MaxNameLen),
			Status: wire.Clamp(r.Status, wire.MaxLabelLen), Detail: wire.Clamp(r.Detail, wire.MaxNoteLen),
		})
	}
	a.Reports = reports
	return a
}

// readReplicaState reads a replica's state file.
func readReplicaState(path string) (replicaState, error) { return status.Read[replicaState](path) }

// decodeReplicaState decodes a replica's state file's bytes.
func decodeReplicaState(b []byte) (replicaState, error) { return status.Decode[replicaState](b) }
