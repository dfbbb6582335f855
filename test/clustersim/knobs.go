package clustersim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FailCreates makes the cloud refuse pool's new servers from now on, as a
// cloud out of capacity does: machine-controller then writes the error into
// the Machine's status and the Machine never joins. An empty message lets
// later creates succeed again; failed Machines stay failed.
func (s *Sim) FailCreates(pool, message string) error {
	return s.setFault("fail-create", pool, message, message != "")
}

// StallDeletes holds (stall true) or releases the deletion of pool's
// servers: machine-controller's cleanup finds them still deleting, so
// their Machines keep their finalizer, and their kubelets keep running.
func (s *Sim) StallDeletes(pool string, stall bool) error {
	return s.setFault("stall-cleanup", pool, "", stall)
}

// HoldJoins keeps (hold true) the kubelets on pool's servers that have not
// registered yet from registering, as when a server never finishes booting.
// Released, each registers at the next pass once JoinDelay has passed.
func (s *Sim) HoldJoins(pool string, hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hold {
		s.held[pool] = true
		return
	}
	delete(s.held, pool)
}

// SetNodeReady has the Node's kubelet report Ready True or False from now
// on (a False one keeps renewing its Lease: the node is up, its runtime is
// not). It starts a stopped kubelet again.
func (s *Sim) SetNodeReady(ctx context.Context, name string, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return s.SetNodeCondition(ctx, name, status, time.Now())
}

// SetNodeCondition sets the Node's Ready condition to status with
// lastTransitionTime since, so a test need not wait out the minutes a heal
// requires. True or False: the kubelet reports that status from now on,
// as having begun at since. Unknown: the kubelet stops, and its conditions
// are written as kube-controller-manager would have written them had the
// kubelet gone quiet at since; from then on kube-controller-manager alone
// writes the Node (it taints it and evicts its pods).
func (s *Sim) SetNodeCondition(ctx context.Context, name string, status corev1.ConditionStatus, since time.Time) error {
	switch status {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
	default:
		return fmt.Errorf("set Node %s Ready=%q: want True, False or Unknown", name, status)
	}
	if since.IsZero() {
		return fmt.Errorf("set Node %s Ready=%s: no transition time", name, status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kubeletOn(name)
	if k == nil {
		return fmt.Errorf("set Node %s Ready=%s: no server runs a kubelet for it", name, status)
	}
	if status == corev1.ConditionUnknown {
		k.stopped = true
		t := metav1.NewTime(since)
		return s.writeConditions(ctx, name, conditions(corev1.ConditionUnknown, t, t))
	}
	k.stopped, k.ready, k.since = false, status, since
	k.lease = nil
	return s.postReady(ctx, name, k)
}

// StopKubelet kills the kubelet on the Node's server: no more Lease
// renewals, no more status. Only kube-controller-manager notices, after its
// grace period, as it would notice a server that lost power.
func (s *Sim) StopKubelet(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kubeletOn(name)
	if k == nil {
		return fmt.Errorf("stop the kubelet of Node %s: no server runs one", name)
	}
	k.stopped = true
	s.log.Info("Kubelet stopped", "node", name)
	return nil
}

// KeepAlive runs a kubelet for a Node the caller registered itself, a
// control-plane node for example, so kube-controller-manager sees it alive:
// it renews the Node's Lease and reports Ready until told otherwise.
func (s *Sim) KeepAlive(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kubeletOn(node) != nil {
		return
	}
	s.kubelets[types.UID("static/"+node)] = &kubelet{
		srv: server{Hostname: node}, static: true, registered: true, ready: corev1.ConditionTrue,
	}
}

// kubeletOn finds the kubelet registered as node; s.mu must be held.
func (s *Sim) kubeletOn(node string) *kubelet {
	for _, k := range s.kubelets {
		if k.node() == node {
			return k
		}
	}
	return nil
}
