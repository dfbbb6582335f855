package cluster

import (
	"sort"
	"strings"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

const (
	roleLabelPrefix   = "node-role.kubernetes.io/"
	legacyRoleLabel   = "kubernetes.io/role"
	instanceTypeLabel = "node.kubernetes.io/instance-type"
)

// NodeFrom derives the heartbeat's view of one Node from the typed object.
// A kubelet writes its own node's status, and the labels' count has no
// bound: the record keeps no more of either than the beat sends.
func NodeFrom(n *kubeapi.Node) *Node {
	status, ready := readiness(n.Status.Conditions)
	rec := &Node{
		Name:           n.Name,
		Status:         status,
		Ready:          ready,
		Roles:          wire.Clamp(Roles(n.Labels), wire.MaxNameLen),
		InstanceType:   wire.Clamp(n.Labels[instanceTypeLabel], wire.MaxVersionLen),
		KubeletVersion: wire.Clamp(n.Status.NodeInfo.KubeletVersion, wire.MaxVersionLen),
	}
	if q, ok := n.Status.Capacity[kubeapi.ResourceCPU]; ok {
		rec.CPU = q.String()
	}
	if q, ok := n.Status.Capacity[kubeapi.ResourceMemory]; ok {
		rec.Memory = q.String()
	}
	return rec
}

// readiness maps the Ready condition; a node without one is Unknown, because
// nothing has vouched for it yet.
func readiness(conds []kubeapi.Condition) (string, bool) {
	for _, c := range conds {
		if c.Type != kubeapi.NodeReady {
			continue
		}
		switch c.Status {
		case kubeapi.ConditionTrue:
			return "Ready", true
		case kubeapi.ConditionFalse:
			return "NotReady", false
		default:
			return "Unknown", false
		}
	}
	return "Unknown", false
}

// Roles joins, sorted and de-duplicated, the suffixes of node-role label keys
// (their values are conventionally empty and carry no meaning) and the value
// of the legacy kubernetes.io/role label. A node with no role is a worker.
func Roles(labels map[string]string) string {
	set := map[string]struct{}{}
	for k := range labels {
		if role, ok := strings.CutPrefix(k, roleLabelPrefix); ok && role != "" {
			set[role] = struct{}{}
		}
	}
	if v := labels[legacyRoleLabel]; v != "" {
		set[v] = struct{}{}
	}
	if len(set) == 0 {
		return "worker"
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return strings.Join(roles, ",")
}
