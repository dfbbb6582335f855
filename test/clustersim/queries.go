package clustersim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// MachineInfo is what a test asks of one Machine.
type MachineInfo struct {
	Name        string
	UID         types.UID
	Kubelet     string    // spec.versions.kubelet
	Node        string    // status.nodeRef.name; empty until it joins
	Ready       bool      // its Node exists and is Ready
	Deleting    bool      // deletionTimestamp set; its drain or finalizer is pending
	ErrorReason string    // status.errorReason of a failed create
	Created     time.Time // creationTimestamp (whole seconds)
}

// PodInfo is what a test asks of one pod bound to a Node.
type PodInfo struct {
	Name, Namespace string
	UID             types.UID
	Terminating     bool // deletionTimestamp set, not yet confirmed by a kubelet
}

// Machines lists pool's Machines, deleting ones included, oldest first (the
// name breaking ties). A Machine belongs to the pool its label names.
func (s *Sim) Machines(ctx context.Context, pool string) ([]MachineInfo, error) {
	list, err := s.dyn.Resource(MachinesGVR).Namespace(s.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: PoolLabel + "=" + pool})
	if err != nil {
		return nil, fmt.Errorf("list Machines in %s: %w", s.opts.Namespace, err)
	}
	// Read after the Machines, so a Node a listed Machine joined is here.
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	ready := map[string]bool{}
	for i := range nodes.Items {
		ready[nodes.Items[i].Name] = isReady(&nodes.Items[i])
	}
	var out []MachineInfo
	for i := range list.Items {
		m := &list.Items[i]
		reason, _, _ := unstructured.NestedString(m.Object, "status", "errorReason")
		node := nodeRefName(m)
		out = append(out, MachineInfo{
			Name: m.GetName(), UID: m.GetUID(), Kubelet: machineKubelet(m),
			Node: node, Ready: node != "" && ready[node], Deleting: m.GetDeletionTimestamp() != nil,
			ErrorReason: reason, Created: m.GetCreationTimestamp().Time,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// PodsOn lists the pods bound to node in every namespace, by namespace and
// name, Terminating ones included.
func (s *Sim) PodsOn(ctx context.Context, node string) ([]PodInfo, error) {
	selector := fields.OneTermEqualSelector("spec.nodeName", node).String()
	list, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list Pods on Node %s: %w", node, err)
	}
	out := make([]PodInfo, 0, len(list.Items))
	for _, pod := range list.Items {
		out = append(out, PodInfo{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Terminating: pod.DeletionTimestamp != nil})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Converged reports whether pool has exactly spec.replicas Machines, none
// deleting, every one at the template's kubelet and with a Ready Node:
// scaled, rolled and drained.
func (s *Sim) Converged(ctx context.Context, pool string) (bool, error) {
	ns := s.opts.Namespace
	md, err := s.dyn.Resource(MachineDeploymentsGVR).Namespace(ns).Get(ctx, pool, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get MachineDeployment %s/%s: %w", ns, pool, err)
	}
	machines, err := s.Machines(ctx, pool)
	if err != nil {
		return false, err
	}
	replicas, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
	kubelet, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "versions", "kubelet")
	for _, m := range machines {
		if m.Deleting || !m.Ready || !sameVersion(m.Kubelet, kubelet) {
			return false, nil
		}
	}
	return int64(len(machines)) == replicas, nil
}

// sameVersion compares kubelet versions with or without their "v".
func sameVersion(a, b string) bool { return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v") }

// machineKubelet is the kubelet version a Machine's spec asks for.
func machineKubelet(m *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(m.Object, "spec", "versions", "kubelet")
	return v
}

// nodeRefName is the Node a Machine's status names; "" until it joins.
func nodeRefName(m *unstructured.Unstructured) string {
	name, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
	return name
}
