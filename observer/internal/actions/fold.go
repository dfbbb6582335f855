// Package actions is the observer's side of the hand-off with the actor. The
// actor's leader publishes its action reports in the ConfigMap
// kubehz-actions and holds the Lease kubehz-actor; the observer watches those
// two objects and puts the reports on its beats only while the Lease says
// the actor is alive. Once it is not (deleted, scaled to zero, crashed past
// its lease, or released on shutdown) the beat carries no actions key, which
// the platform reads as "clear": the kill switch is deleting the actor.
package actions

import (
	"slices"
	"time"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// Lease is the compact record of the actor's Lease: who holds it and until
// when it vouches for them.
type Lease struct {
	Holder    string
	RenewTime time.Time
	Duration  time.Duration // leaseDurationSeconds
}

// Expiry is the instant the Lease stops vouching for its holder; zero when
// it never did (no holder, never renewed, no duration). RenewTime is the
// actor's clock and now the observer's: skew between the two nodes shifts
// the instant by the same amount, which the lease duration (seconds) dwarfs
// for any cluster whose nodes keep time.
func (l Lease) Expiry() time.Time {
	if l.Holder == "" || l.RenewTime.IsZero() || l.Duration <= 0 {
		return time.Time{}
	}
	return l.RenewTime.Add(l.Duration)
}

// Live reports whether the holder was renewed within the duration at now:
// renewTime + duration > now. Exactly at the boundary the Lease has lapsed.
func (l Lease) Live(now time.Time) bool {
	exp := l.Expiry()
	return !exp.IsZero() && now.Before(exp)
}

// Fold decides what the beat carries: the report's actions while the Lease
// is live and its holder wrote the report, nil otherwise or when there are
// none, so the key is omitted and the platform clears its list. The result
// is a copy the caller may keep.
//
// A report written by anyone but the live holder never rides: a dead
// leader's reports must not be vouched for by its successor's Lease, however
// long the successor takes to reach the platform, and an actor Deployment
// re-created after the kill switch must not revive the reports of the one
// that was deleted. A new leader publishes an empty report under its own
// name as soon as it wins, so a failover clears the list and the new term's
// reports follow.
func Fold(doc report.Document, lease *Lease, now time.Time) []wire.Action {
	if lease == nil || !lease.Live(now) || len(doc.Actions) == 0 || !sameHolder(doc, lease) {
		return nil
	}
	return slices.Clone(doc.Actions)
}

// sameHolder compares the Lease's holder as the codec clamped the report's.
func sameHolder(doc report.Document, lease *Lease) bool {
	return doc.Holder != "" && wire.Clamp(lease.Holder, wire.MaxNameLen) == doc.Holder
}

// Mismatch reports whether the report was written by someone other than the
// Lease's current holder; such a report is withheld. An unnamed side is not
// a mismatch: there is nothing to compare.
func Mismatch(doc report.Document, lease *Lease) bool {
	if lease == nil || lease.Holder == "" || doc.Holder == "" {
		return false
	}
	return !sameHolder(doc, lease)
}
