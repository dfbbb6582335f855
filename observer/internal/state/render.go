package state

import (
	"fmt"

	"kubehz.dev/agent/shared/status"
)

// Render lists the observer's state.
func (o Observer) Render(t *status.Table) {
	t.Line("version", o.Version)
	t.Age("started", o.Started)
	t.Line("heartbeat", o.heartbeat())
	t.Outcome("last beat", o.LastAttempt, o.LastOutcome)
	t.Age("last delivered", o.LastDelivered)
	if !o.FailingSince.IsZero() {
		t.Age("failing since", o.FailingSince)
	}
	t.LastError(o.LastErrorAt, o.LastError)
	t.Line("actor lease", o.Actor.describe())
	t.Count("nodes", o.Caches.Nodes)
	t.Count("pods", o.Caches.Pods)
	t.Count("warning events", o.Caches.WarningEvents)
	t.Count("machines", o.Caches.Machines)
	t.Count("pools", o.Caches.Pools)
	t.Age("state written", o.Written)
}

func (o Observer) heartbeat() string {
	if o.Beating {
		return "sent by this observer"
	}
	return "standing down: the heartbeat-owner marker names the lok8s CronJob"
}

func (l ActorLease) describe() string {
	switch {
	case l.Holder == "":
		return "no holder (no actor running, or the actor tier is not installed)"
	case !l.Live:
		return l.Holder + " (lapsed: its reports are withheld)"
	default:
		return fmt.Sprintf("%s (live: %d reports ride the beat)", l.Holder, l.Riding)
	}
}
