package state

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"kubehz.dev/agent/shared/status"
)

// Render prints the observer's state as aligned "key: value" lines, times
// as ages relative to now.
func (o Observer) Render(w io.Writer, now time.Time) error {
	t := status.NewTable(w)
	t.Line("version", o.Version)
	t.Line("started", status.Ago(o.Started, now))
	t.Line("heartbeat", o.heartbeat())
	t.Line("last beat", status.Outcome(o.LastAttempt, now, o.LastOutcome))
	t.Line("last delivered", status.Ago(o.LastDelivered, now))
	if !o.FailingSince.IsZero() {
		t.Line("failing since", status.Ago(o.FailingSince, now))
	}
	if o.LastError != "" {
		t.Line("last error", status.Ago(o.LastErrorAt, now)+": "+o.LastError)
	}
	t.Line("actor lease", o.Actor.describe())
	t.Line("nodes", strconv.Itoa(o.Caches.Nodes))
	t.Line("pods", strconv.Itoa(o.Caches.Pods))
	t.Line("warning events", strconv.Itoa(o.Caches.WarningEvents))
	t.Line("machines", strconv.Itoa(o.Caches.Machines))
	t.Line("pools", strconv.Itoa(o.Caches.Pools))
	t.Line("state written", status.Ago(o.Written, now))
	return t.Flush()
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
