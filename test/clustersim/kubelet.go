package clustersim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// kubelet is the simulated kubelet on one server.
type kubelet struct {
	srv  server
	seen time.Time // when the simulator first saw the server
	// static kubelets run on a Node a test registered itself, such as a
	// control-plane node; they have no server and never register.
	static     bool
	registered bool
	// stopped kubelets neither renew their Lease nor post status: the
	// server is dead, and only kube-controller-manager writes its Node.
	stopped bool
	ready   corev1.ConditionStatus // what a live kubelet reports: True or False
	since   time.Time              // when that began, if a test set it; else the write's own time
	lease   *coordinationv1.Lease  // as last written
}

func (k *kubelet) node() string { return k.srv.Hostname }

// stepKubelet runs one beat of k: register once due, then keep the Node's
// Ready condition and Lease current. s.mu must be held.
func (s *Sim) stepKubelet(ctx context.Context, w *world, k *kubelet) error {
	if k.stopped {
		return nil
	}
	m := w.machines[k.srv.UID]
	if !k.registered {
		if w.now.Sub(k.seen) < s.opts.JoinDelay || s.held[poolOf(m)] {
			return nil
		}
	}
	node, ok := w.nodes[k.node()]
	if !ok && k.registered {
		// A kubelet registers its Node once, when it starts, and a Node
		// deleted after that stays deleted. machine-controller deletes a
		// Machine's server, then its Node: a pass that read the servers
		// before the one and the Nodes after the other must not bring the
		// Node back, with no Machine left to delete it again. (A static
		// kubelet's Node was registered by the test.)
		return nil
	}
	if !k.registered {
		var err error
		if node, err = s.register(ctx, w, k, m); err != nil {
			return err
		}
		s.log.Info("Kubelet registered its Node", "node", node.Name, "machine", k.srv.Namespace+"/"+k.srv.Machine)
		k.registered = true
	}
	if c := readyCondition(node); c == nil || c.Status != k.ready {
		if err := s.postReady(ctx, node.Name, k); err != nil {
			return err
		}
	}
	return s.renewLease(ctx, w.now, node, k)
}

// register creates the Node as a kubelet registers it, then writes its
// first status, which a create may drop. A registration whose status write
// failed is completed on a later pass, the Node then already there.
func (s *Sim) register(ctx context.Context, w *world, k *kubelet, m *unstructured.Unstructured) (*corev1.Node, error) {
	want := newNode(k, m, metav1.NewTime(w.now))
	nodes := s.kube.CoreV1().Nodes()
	node, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = nodes.Get(ctx, want.Name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("register Node %s: %w", want.Name, err)
	}
	node.Status = want.Status
	if node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("post the first status of Node %s: %w", want.Name, err)
	}
	w.nodes[node.Name] = node
	k.lease = nil
	return node, nil
}

// newNode is the Node a kubelet on the server registers: the standard
// labels, the Machine's spec labels (which operating-system-manager hands
// the kubelet), the instance type a cloud controller manager would add,
// the server's providerID and address, and the Machine's kubelet version.
func newNode(k *kubelet, m *unstructured.Unstructured, now metav1.Time) *corev1.Node {
	labels := map[string]string{}
	serverType := defaultServerType
	if m != nil {
		specLabels, _, _ := unstructured.NestedStringMap(m.Object, "spec", "metadata", "labels")
		for key, v := range specLabels {
			labels[key] = v
		}
		if t, _, _ := unstructured.NestedString(m.Object, "spec", "providerSpec", "value", "cloudProviderSpec", "serverType"); t != "" {
			serverType = t
		}
	}
	for key, v := range map[string]string{
		"kubernetes.io/hostname": k.node(), "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", InstanceTypeLabel: serverType,
	} {
		labels[key] = v
	}
	kubeletVersion := k.srv.Kubelet
	if kubeletVersion != "" && kubeletVersion[0] != 'v' {
		kubeletVersion = "v" + kubeletVersion
	}
	capacity := capacityOf(serverType)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: k.node(), Labels: labels,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{ProviderID: k.srv.providerID()},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  k.reported(now),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: k.srv.Address},
				{Type: corev1.NodeHostName, Address: k.node()},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          kubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				OSImage:                 "Ubuntu 24.04 LTS",
				KernelVersion:           "6.8.0-51-generic",
				ContainerRuntimeVersion: "containerd://2.1.4",
			},
		},
	}
}

// postReady writes the Ready condition the kubelet reports, keeping the
// other conditions a kubelet posts beside it.
func (s *Sim) postReady(ctx context.Context, name string, k *kubelet) error {
	return s.writeConditions(ctx, name, k.reported(metav1.Now()))
}

// reported is the kubelet's conditions as it posts them at now: its Ready
// status began at since when a test set it, else now. A registration goes
// through here too: its status write can lose to machine-controller
// labelling the new Node and be redone a pass later, after a test set the
// kubelet NotReady since minutes ago, and a transition of now then kept a
// heal waiting out the whole unhealthy window.
func (k *kubelet) reported(now metav1.Time) []corev1.NodeCondition {
	transition := now
	if !k.since.IsZero() {
		transition = metav1.NewTime(k.since)
	}
	return conditions(k.ready, transition, now)
}

// writeConditions replaces the Node's four kubelet conditions. It reads the
// Node again on a conflict: machine-controller labels a Node and
// kube-controller-manager taints it whenever they choose, so a write may
// race theirs (client-go's default retry bounds it to five attempts).
func (s *Sim) writeConditions(ctx context.Context, name string, want []corev1.NodeCondition) error {
	nodes := s.kube.CoreV1().Nodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status.Conditions = slices.DeleteFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return kubeletCondition(c.Type) })
		node.Status.Conditions = append(node.Status.Conditions, want...)
		_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("post status of Node %s: %w", name, err)
	}
	s.log.Info("Kubelet posted Node status", "node", name, "ready", string(want[0].Status))
	return nil
}

// renewLease renews the Node's Lease when leaseRenewal has passed, creating
// it, owned by the Node as a kubelet makes it, if need be.
func (s *Sim) renewLease(ctx context.Context, now time.Time, node *corev1.Node, k *kubelet) error {
	if k.lease != nil && now.Sub(k.lease.Spec.RenewTime.Time) < leaseRenewal {
		return nil
	}
	leases := s.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	renew := metav1.NewMicroTime(now)
	if k.lease == nil {
		l, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l = &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{
					Name: node.Name, Namespace: corev1.NamespaceNodeLease,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
				},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name), LeaseDurationSeconds: ptr.To[int32](leaseDuration), RenewTime: &renew},
			}
			if l, err = leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create the Lease of Node %s: %w", node.Name, err)
			}
			k.lease = l
			return nil
		}
		if err != nil {
			return fmt.Errorf("get the Lease of Node %s: %w", node.Name, err)
		}
		k.lease = l
	}
	l := k.lease.DeepCopy()
	l.Spec.RenewTime = &renew
	updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		k.lease = nil // read it again next beat
		return quiet(fmt.Errorf("renew the Lease of Node %s: %w", node.Name, err))
	}
	k.lease = updated
	return nil
}

// confirmDeletions plays each live, Ready kubelet: a pod deleting on its
// Node is stopped and removed with grace 0. The UID precondition keeps a
// pod recreated under the same name safe. On a dead or NotReady Node
// nothing confirms, so the pod stays Terminating, as in a real cluster.
func (s *Sim) confirmDeletions(ctx context.Context, w *world, live map[string]bool) error {
	var errs []error
	for node, pods := range w.pods {
		if !live[node] {
			continue
		}
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil {
				continue
			}
			opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}
			if err := quiet(s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)); err != nil {
				errs = append(errs, fmt.Errorf("confirm deletion of Pod %s/%s on Node %s: %w", pod.Namespace, pod.Name, node, err))
				continue
			}
			s.log.Info("Kubelet confirmed Pod deletion", "pod", pod.Namespace+"/"+pod.Name, "node", node)
		}
	}
	return errors.Join(errs...)
}

// poolOf is the pool a Machine belongs to, by its label; "" for none.
func poolOf(m *unstructured.Unstructured) string {
	if m == nil {
		return ""
	}
	return m.GetLabels()[PoolLabel]
}
