package kubeapi

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Event is a v1 Event as the heartbeat reads it. Its source, related
// object, action and reporting fields are stepped over.
type Event struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	InvolvedObject ObjectReference  `json:"involvedObject"`
	Reason         string           `json:"reason,omitempty"`
	Message        string           `json:"message,omitempty"`
	LastTimestamp  metav1.Time      `json:"lastTimestamp,omitempty"`
	Count          int32            `json:"count,omitempty"`
	Type           string           `json:"type,omitempty"`
	EventTime      metav1.MicroTime `json:"eventTime,omitempty"`
	Series         *EventSeries     `json:"series,omitempty"`
}

// ObjectReference is the part of an event's involved object the heartbeat
// reads.
type ObjectReference struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// EventSeries is the part of an event series the heartbeat reads.
type EventSeries struct {
	LastObservedTime metav1.MicroTime `json:"lastObservedTime,omitempty"`
}

// Reset is called by the protobuf serializer before Unmarshal.
func (e *Event) Reset() { *e = Event{} }

// EventTypeWarning is the type of the only events the observer counts.
const EventTypeWarning = "Warning"

// Fields of k8s.io/api/core/v1's Event that Event reads.
const (
	eventInvolvedObject = 2
	eventReason         = 3
	eventMessage        = 4
	eventLastTimestamp  = 7
	eventCount          = 8
	eventType           = 9
	eventEventTime      = 10
	eventSeries         = 11

	referenceKind, referenceNamespace, referenceName = 1, 2, 3
	seriesLastObservedTime                           = 2
)

var (
	eventFields = []field{
		{objectMetadata, lenType}, {eventInvolvedObject, lenType}, {eventReason, lenType}, {eventMessage, lenType},
		{eventLastTimestamp, lenType}, {eventCount, varintType}, {eventType, lenType}, {eventEventTime, lenType},
		{eventSeries, lenType},
	}
	eventMetaFields = append(slices.Clip(keyFields), field{metaCreationTimestamp, lenType})
	referenceFields = []field{{referenceKind, lenType}, {referenceNamespace, lenType}, {referenceName, lenType}}
)

// Unmarshal decodes a protobuf Event, keeping only what Event holds.
func (e *Event) Unmarshal(b []byte) error {
	return eachField(b, "Event", eventFields, func(num protowire.Number, v []byte) error {
		switch num {
		case objectMetadata:
			return unmarshalMeta(&e.ObjectMeta, v, eventMetaFields)
		case eventInvolvedObject:
			return e.InvolvedObject.unmarshal(v)
		case eventReason:
			e.Reason = string(v)
		case eventMessage:
			e.Message = string(v)
		case eventLastTimestamp:
			return e.LastTimestamp.Unmarshal(v)
		case eventCount:
			e.Count = int32(varint(v)) //nolint:gosec // int32 on the wire, sign-extended to 64 bits
		case eventType:
			e.Type = string(v)
		case eventEventTime:
			return e.EventTime.Unmarshal(v)
		case eventSeries:
			if e.Series == nil { // a repeated message merges, as protobuf's do
				e.Series = &EventSeries{}
			}
			return readMessage(v, "EventSeries", seriesLastObservedTime, e.Series.LastObservedTime.Unmarshal)
		}
		return nil
	})
}

func (r *ObjectReference) unmarshal(b []byte) error {
	return readStrings(b, "ObjectReference", referenceFields, &r.Kind, &r.Namespace, &r.Name)
}
