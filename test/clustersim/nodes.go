package clustersim

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// join plays the kubelet: once JoinDelay has passed since the Machine was
// created, its Node registers Ready and the Machine's status.nodeRef names
// it. Failed Machines never join; one created under a failure that did not
// reach its status yet gets the failure written instead. While the pool's
// joins are held, nothing joins.
func (s *Sim) join(ctx context.Context, w *world, pool string, m *unstructured.Unstructured) error {
	if nodeRefName(m) != "" {
		return nil
	}
	if reason, _, _ := unstructured.NestedString(m.Object, "status", "errorReason"); reason != "" {
		return nil
	}
	b, ok := s.recall(m.GetUID())
	if !ok {
		// Created by someone else or before this simulator ran. The
		// creationTimestamp is cut to whole seconds; a second more makes
		// sure the join is never early.
		b = birth{at: m.GetCreationTimestamp().Add(time.Second)}
	}
	if b.fail != nil {
		_, err := s.markFailed(ctx, m, *b.fail)
		return err
	}
	if w.now.Sub(b.at) < s.opts.JoinDelay || s.isHeld(pool) {
		return nil
	}
	node, err := s.ensureNode(ctx, w, pool, m)
	if err != nil {
		return err
	}
	m = m.DeepCopy()
	ref := map[string]any{"apiVersion": "v1", "kind": "Node", "name": node.Name, "uid": string(node.UID)}
	if err := unstructured.SetNestedMap(m.Object, ref, "status", "nodeRef"); err != nil {
		return err
	}
	if _, err := s.machinesAPI().UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
		return quiet(err)
	}
	s.log.Info("Node joined", "machine", objectKey(m), "node", node.Name)
	return nil
}

// ensureNode returns the Machine's Node, registering it if need be.
func (s *Sim) ensureNode(ctx context.Context, w *world, pool string, m *unstructured.Unstructured) (*corev1.Node, error) {
	if node, ok := w.nodes[m.GetName()]; ok {
		return node, nil
	}
	nodes := s.kube.CoreV1().Nodes()
	want := newNode(m, pool, metav1.NewTime(w.now))
	node, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = nodes.Get(ctx, want.Name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("register Node %s: %w", want.Name, err)
	}
	if readyCondition(node) == nil {
		// Status sent with a create may be dropped; write it the way a
		// kubelet's first status update does.
		node.Status = want.Status
		if node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("set status of Node %s: %w", want.Name, err)
		}
	}
	w.nodes[node.Name] = node
	return node, nil
}

// newNode is the Node a kubelet on the Machine's server would register.
func newNode(m *unstructured.Unstructured, pool string, now metav1.Time) *corev1.Node {
	labels, _, _ := unstructured.NestedStringMap(m.Object, "spec", "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	serverType, _, _ := unstructured.NestedString(m.Object, "spec", "providerSpec", "value", "cloudProviderSpec", "serverType")
	if serverType == "" {
		serverType = defaultServerType
	}
	labels["kubernetes.io/hostname"] = m.GetName()
	labels["kubernetes.io/os"] = "linux"
	labels["kubernetes.io/arch"] = "amd64"
	labels[InstanceTypeLabel] = serverType
	labels[PoolLabel] = pool
	kubelet, _, _ := unstructured.NestedString(m.Object, "spec", "versions", "kubelet")
	if kubelet != "" && !strings.HasPrefix(kubelet, "v") {
		kubelet = "v" + kubelet
	}
	capacity := capacityOf(serverType)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  []corev1.NodeCondition{readyState(corev1.ConditionTrue, now, now)},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          kubelet,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				OSImage:                 "Ubuntu 24.04 LTS",
				ContainerRuntimeVersion: "containerd://2.1.4",
			},
		},
	}
}

// capacityOf knows a few Hetzner server types (vCPUs, GiB of memory);
// anything else looks like the smallest shared one.
func capacityOf(serverType string) corev1.ResourceList {
	sizes := map[string][2]int64{
		"cx22": {2, 4}, "cx32": {4, 8}, "cx42": {8, 16}, "cx52": {16, 32},
		"cpx11": {2, 2}, "cpx21": {3, 4}, "cpx31": {4, 8}, "cpx41": {8, 16}, "cpx51": {16, 32},
		"ccx13": {2, 8}, "ccx23": {4, 16}, "ccx33": {8, 32},
	}
	size, ok := sizes[serverType]
	if !ok {
		size = sizes["cx22"]
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(size[0], resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(size[1]<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
}
