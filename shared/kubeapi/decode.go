package kubeapi

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The partial decoders of Node, Event and PodPhase. Each kind keeps the
// fields below, numbered as in k8s.io/api/core/v1's generated.proto, and
// steps over the rest; fieldnumbers_test.go pins every number to the
// protobuf tag of the k8s.io/api field it stands for.

// Reset, which the protobuf serializer calls before Unmarshal, empties the
// object.
func (n *Node) Reset()     { *n = Node{} }
func (e *Event) Reset()    { *e = Event{} }
func (p *PodPhase) Reset() { *p = PodPhase{} }

const (
	nodeStatusCapacity, nodeStatusConditions, nodeStatusNodeInfo = 1, 4, 7
	nodeConditionType, nodeConditionStatus                       = 1, 2
	nodeInfoKubeletVersion                                       = 7

	eventInvolvedObject, eventReason, eventMessage   = 2, 3, 4
	eventLastTimestamp, eventCount, eventType        = 7, 8, 9
	eventEventTime, eventSeries                      = 10, 11
	referenceKind, referenceNamespace, referenceName = 1, 2, 3
	seriesLastObservedTime                           = 2

	podStatusPhase = 1
)

var (
	nodeMetaFields   = append(slices.Clip(keyFields), field{metaLabels, lenType})
	nodeStatusFields = []field{{nodeStatusCapacity, lenType}, {nodeStatusConditions, lenType}, {nodeStatusNodeInfo, lenType}}
	conditionFields  = []field{{nodeConditionType, lenType}, {nodeConditionStatus, lenType}}

	eventFields = []field{
		{objectMetadata, lenType}, {eventInvolvedObject, lenType}, {eventReason, lenType}, {eventMessage, lenType},
		{eventLastTimestamp, lenType}, {eventCount, varintType}, {eventType, lenType}, {eventEventTime, lenType},
		{eventSeries, lenType},
	}
	eventMetaFields = append(slices.Clip(keyFields), field{metaCreationTimestamp, lenType})
	referenceFields = []field{{referenceKind, lenType}, {referenceNamespace, lenType}, {referenceName, lenType}}
)

// Unmarshal decodes a protobuf Node, keeping only what Node holds.
func (n *Node) Unmarshal(b []byte) error {
	return unmarshalObject(b, "Node", &n.ObjectMeta, nodeMetaFields, n.Status.unmarshal)
}

func (s *NodeStatus) unmarshal(b []byte) error {
	return eachField(b, "NodeStatus", nodeStatusFields, func(num protowire.Number, v []byte) error {
		switch num {
		case nodeStatusCapacity:
			key, value, err := unmarshalMapEntry(v, "capacity")
			if err != nil || (string(key) != ResourceCPU && string(key) != ResourceMemory) {
				return err
			}
			var q resource.Quantity
			if err := q.Unmarshal(value); err != nil {
				return err
			}
			if s.Capacity == nil {
				s.Capacity = map[string]resource.Quantity{}
			}
			s.Capacity[string(key)] = q
		case nodeStatusConditions:
			var c Condition
			if err := c.unmarshal(v); err != nil {
				return err
			}
			s.Conditions = append(s.Conditions, c)
		case nodeStatusNodeInfo:
			return readString(v, "NodeSystemInfo", nodeInfoKubeletVersion, &s.NodeInfo.KubeletVersion)
		}
		return nil
	})
}

// unmarshal reads a NodeCondition's type and status, its fields 1 and 2.
// It is for node conditions only: kinds number their conditions' fields
// differently (a CertificateSigningRequestCondition's 2 is its reason and 6
// its status), and the CSRs and Pods this package reads travel as JSON,
// where Condition's json tags apply.
func (c *Condition) unmarshal(b []byte) error {
	return readStrings(b, "condition", conditionFields, &c.Type, &c.Status)
}

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

// Unmarshal decodes a protobuf Pod, keeping only what PodPhase holds.
func (p *PodPhase) Unmarshal(b []byte) error {
	return unmarshalObject(b, "Pod", &p.ObjectMeta, keyFields, func(v []byte) error {
		return readString(v, "PodStatus", podStatusPhase, &p.Status.Phase)
	})
}
