package kubeapi

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Node is a v1 Node as the heartbeat reads it: its key and labels, the cpu
// and memory of its capacity, its conditions and its kubelet's version. The
// rest (images, addresses, the spec, managedFields) is stepped over.
type Node struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            NodeStatus `json:"status,omitempty"`
}

// NodeStatus is the part of a node's status the heartbeat reads.
type NodeStatus struct {
	// Capacity holds the "cpu" and "memory" entries only.
	Capacity   map[string]resource.Quantity `json:"capacity,omitempty"`
	Conditions []Condition                  `json:"conditions,omitempty"`
	NodeInfo   NodeInfo                     `json:"nodeInfo,omitempty"`
}

// NodeInfo is the part of a node's system info the heartbeat reads.
type NodeInfo struct {
	KubeletVersion string `json:"kubeletVersion,omitempty"`
}

// Condition is the type and status of any kind's condition.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// Reset is called by the protobuf serializer before Unmarshal.
func (n *Node) Reset() { *n = Node{} }

// Capacity resources a Node keeps.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
)

// Fields of k8s.io/api/core/v1's Node that Node reads.
const (
	nodeStatus             = 3
	nodeStatusCapacity     = 1
	nodeStatusConditions   = 4
	nodeStatusNodeInfo     = 7
	nodeConditionType      = 1
	nodeConditionStatus    = 2
	nodeInfoKubeletVersion = 7
)

var (
	nodeFields       = []field{{objectMetadata, lenType}, {nodeStatus, lenType}}
	nodeMetaFields   = append(slices.Clip(keyFields), field{metaLabels, lenType})
	nodeStatusFields = []field{{nodeStatusCapacity, lenType}, {nodeStatusConditions, lenType}, {nodeStatusNodeInfo, lenType}}
	conditionFields  = []field{{nodeConditionType, lenType}, {nodeConditionStatus, lenType}}
)

// Unmarshal decodes a protobuf Node, keeping only what Node holds.
func (n *Node) Unmarshal(b []byte) error {
	return eachField(b, "Node", nodeFields, func(num protowire.Number, v []byte) error {
		switch num {
		case objectMetadata:
			return unmarshalMeta(&n.ObjectMeta, v, nodeMetaFields)
		case nodeStatus:
			return n.Status.unmarshal(v)
		}
		return nil
	})
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
