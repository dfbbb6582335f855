package cluster

import (
	"time"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// Transforms run before an object enters an informer cache. They must be
// idempotent: client-go may hand an already-transformed record back through
// them (watch-list replays, tombstones built from the cache).

var (
	nodeTransform = informer.Transform("node", NodeFrom)
)

// MachineKind and ReconcilingError identify machine-controller's retry-loop
// events: a transient failure is reported only as such a Warning on the
// Machine, never in its status.
const (
	MachineKind      = "Machine"
	ReconcilingError = "ReconcilingError"
)

// EventOptions say what an event record keeps.
type EventOptions struct {
	// KeepMessage keeps every Warning's message: only when notes may leave
	// the cluster.
	KeepMessage bool
	// MDNamespace is where machine-controller files its Machine events: only
	// there does a record keep the Machine it names and a retry loop's
	// message, which machine issues read.
	MDNamespace string
	// Now is the time the event is read at; a lastSeen past it is not
	// believed.
	Now time.Time
}

// MaxClockSkew is how far past the observer's clock an event's own time
// may lie and still be believed.
const MaxClockSkew = time.Minute

// EventFrom compacts a Warning event. LastSeen prefers the series' last
// observation, the truest "last seen" of a new-style event (closing
// docs/contract.md#g-14), then lastTimestamp, eventTime and finally
// creationTimestamp. The first three are the writer's word, and any
// writer may date an event years ahead, which would hold the beat's 20
// newest slots for that long, or outside the years a timestamp can spell,
// which the platform may refuse the beat for. Such a time gives way to
// creationTimestamp, which the apiserver sets.
func EventFrom(e *kubeapi.Event, o EventOptions) *Event {
	// A core/v1 Event's reason, kind and message have no length limit, and
	// anyone who may create Events could fill the cache with megabytes: a
	// record keeps no more of them than the beat sends (its caps, counted
	// as the beat counts them, so the beat's own clamp changes nothing).
	rec := &Event{
		Namespace: e.Namespace,
		Name:      e.Name,
		Reason:    wire.Clamp(e.Reason, wire.MaxLabelLen),
		Kind:      wire.Clamp(e.InvolvedObject.Kind, wire.MaxLabelLen),
		Warning:   e.Type == kubeapi.EventTypeWarning,
		Count:     e.Count,
	}
	message := ""
	// A recorder files an Event in its object's namespace. core/v1 checks
	// that only for an Event without eventTime, so one about a Machine filed
	// elsewhere is someone else's word about it, not machine-controller's:
	// it is kept as any other Warning. Outside the MD namespace no Machine
	// of the beat's lives, so its name and message would be memory spent on
	// nothing, in any namespace a tenant may fill with Events.
	if e.InvolvedObject.Kind == MachineKind && e.InvolvedObject.Namespace == e.Namespace && e.Namespace == o.MDNamespace {
		// A name longer than any Machine's can match none: it is dropped, not
		// cut to one that might.
		if len(e.InvolvedObject.Namespace) <= wire.MaxNameLen && len(e.InvolvedObject.Name) <= wire.MaxNameLen {
			rec.InvolvedNamespace, rec.InvolvedName = e.InvolvedObject.Namespace, e.InvolvedObject.Name
		}
		if e.Reason == ReconcilingError {
			message = e.Message
		}
	}
	if o.KeepMessage {
		message = e.Message
	}
	rec.Message = wire.Clamp(message, wire.MaxNoteLen)
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		rec.LastSeen = e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		rec.LastSeen = e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		rec.LastSeen = e.EventTime.Time
	default:
		rec.LastSeen = e.CreationTimestamp.Time
	}
	if rec.LastSeen.After(o.Now.Add(MaxClockSkew)) || rec.LastSeen.Year() < 1970 {
		rec.LastSeen = e.CreationTimestamp.Time
	}
	// The protobuf decoder gives local times; records hold UTC, so they
	// compare equal whatever the process's time zone.
	rec.LastSeen = rec.LastSeen.UTC()
	return rec
}
