// Package state is what `observer status` shows and `observer ready` judges:
// the state the running observer keeps in its status file (the file's format
// is shared/status), how it is printed, and the readiness rule. Only the
// observer writes and reads it.
package state

import (
	"time"

	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

// Observer is what the running observer last knew about itself.
type Observer struct {
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Written time.Time `json:"written"`
	// Beating is false while the heartbeat-owner marker names the lok8s
	// CronJob: the observer then stands down and sends nothing.
	Beating bool `json:"beating"`

	// LastAttempt is when the last delivery attempt ended, and LastOutcome
	// how: "delivered", "HTTP 503", or "error".
	LastAttempt   time.Time `json:"lastAttempt,omitzero"`
	LastOutcome   string    `json:"lastOutcome,omitempty"`
	LastDelivered time.Time `json:"lastDelivered,omitzero"`
	// FailingSince is the first failure of the current streak; zero while
	// the last attempt was delivered.
	FailingSince time.Time `json:"failingSince,omitzero"`
	LastError    string    `json:"lastError,omitempty"`
	LastErrorAt  time.Time `json:"lastErrorAt,omitzero"`

	Caches Caches     `json:"caches"`
	Actor  ActorLease `json:"actor"`
}

// Caches are the sizes of what the observer holds in memory.
type Caches struct {
	Nodes         int `json:"nodes"`
	Pods          int `json:"pods"`
	WarningEvents int `json:"warningEvents"`
	Machines      int `json:"machines"`
	Pools         int `json:"pools"`
}

// ActorLease is the actor's Lease as the observer sees it.
type ActorLease struct {
	Holder string `json:"holder,omitempty"`
	Live   bool   `json:"live"`
	// Riding is how many of the actor's reports the next beat carries.
	Riding int `json:"riding"`
}

// Clamp bounds every free text, so the file stays small whatever an error
// says.
func (o Observer) Clamp() Observer {
	o.LastError = wire.Clamp(o.LastError, status.MaxErrorLen)
	o.LastOutcome = wire.Clamp(o.LastOutcome, wire.MaxLabelLen)
	o.Version = wire.Clamp(o.Version, wire.MaxVersionLen)
	o.Actor.Holder = wire.Clamp(o.Actor.Holder, wire.MaxNameLen)
	return o
}

// Read reads the observer's state file.
func Read(path string) (Observer, error) { return status.Read[Observer](path) }

// Decode decodes an observer state file's bytes.
func Decode(b []byte) (Observer, error) { return status.Decode[Observer](b) }
