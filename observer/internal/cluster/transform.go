package cluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Transforms run before an object enters an informer cache. They must be
// idempotent: client-go may hand an already-transformed record back through
// them (watch-list replays, tombstones built from the cache).

func nodeTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		return NodeFrom(o), nil
	case *Node:
		return o, nil
	case cache.DeletedFinalStateUnknown:
		return rewrap(o, nodeTransform)
	}
	return nil, fmt.Errorf("node informer: unexpected %T", obj)
}

func podTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &Pod{Namespace: o.Namespace, Name: o.Name, Phase: string(o.Status.Phase)}, nil
	case *Pod:
		return o, nil
	case cache.DeletedFinalStateUnknown:
		return rewrap(o, podTransform)
	}
	return nil, fmt.Errorf("pod informer: unexpected %T", obj)
}

// eventTransform keeps the event message only when notes may leave the
// cluster: a message the beat will never send should not sit in memory.
func eventTransform(keepMessage bool) cache.TransformFunc {
	var t cache.TransformFunc
	t = func(obj any) (any, error) {
		switch o := obj.(type) {
		case *corev1.Event:
			return EventFrom(o, keepMessage), nil
		case *Event:
			return o, nil
		case cache.DeletedFinalStateUnknown:
			return rewrap(o, t)
		}
		return nil, fmt.Errorf("event informer: unexpected %T", obj)
	}
	return t
}

func rewrap(d cache.DeletedFinalStateUnknown, t cache.TransformFunc) (any, error) {
	if d.Obj == nil {
		return d, nil
	}
	inner, err := t(d.Obj)
	if err != nil {
		return nil, err
	}
	return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: inner}, nil
}

// MachineKind and ReconcilingError identify machine-controller's retry-loop
// events: a transient failure is reported only as such a Warning on the
// Machine, never in its status.
const (
	MachineKind      = "Machine"
	ReconcilingError = "ReconcilingError"
)

// EventFrom compacts a Warning event. LastSeen prefers the series' last
// observation, the truest "last seen" of a new-style event (closing G-14),
// then lastTimestamp, eventTime and finally creationTimestamp.
func EventFrom(e *corev1.Event, keepMessage bool) *Event {
	rec := &Event{
		Namespace: e.Namespace,
		Name:      e.Name,
		Reason:    e.Reason,
		Kind:      e.InvolvedObject.Kind,
		Warning:   e.Type == corev1.EventTypeWarning,
		Count:     e.Count,
	}
	if e.InvolvedObject.Kind == MachineKind {
		rec.InvolvedNamespace, rec.InvolvedName = e.InvolvedObject.Namespace, e.InvolvedObject.Name
		if e.Reason == ReconcilingError {
			rec.Message = e.Message
		}
	}
	if keepMessage {
		rec.Message = e.Message
	}
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
	return rec
}
