package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/actor/internal/scale"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/printable"
)

// mdPatcher sends the decided JSON merge patch. The body carries the
// resourceVersion the decision was made on, so the apiserver refuses (409) a
// patch decided on a stale read.
type mdPatcher struct{ dyn dynamic.Interface }

func (p *mdPatcher) PatchMD(ctx context.Context, namespace, name string, body []byte) error {
	_, err := p.dyn.Resource(cluster.MachineDeploymentGVR).Namespace(namespace).Patch(ctx, name, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: scale.FieldManager})
	return err
}

// eventRecorder writes Events directly, synchronously and fenced like every
// other write: no background broadcaster that could still be sending after
// the lease is gone.
type eventRecorder struct {
	client   kubernetes.Interface
	fence    execute.Fence
	identity string
	log      *slog.Logger
}

func (r *eventRecorder) Event(ctx context.Context, obj execute.Object, warning bool, reason, message string) {
	wctx, cancel, err := r.fence.Write(ctx)
	if err != nil {
		return
	}
	defer cancel()
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: obj.Name + ".", Namespace: obj.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "cluster.k8s.io/v1alpha1", Kind: obj.Kind,
			Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion,
		},
		// The last step before `kubectl describe`: whatever text reached
		// here, nothing in it can drive a terminal.
		Type: typ, Reason: printable.String(reason), Message: printable.String(message), Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: "kubehz-actor"},
		ReportingController: "kubehz.dev/actor", ReportingInstance: r.identity,
	}
	if _, err := r.client.CoreV1().Events(obj.Namespace).Create(wctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Warn("Cannot record an Event", "kind", obj.Kind, "object", obj.Namespace+"/"+obj.Name, "err", err)
	}
}

// machineDeleter sends healing's deletes. Every delete carries
// preconditions, so what is deleted is exactly what was decided on: a
// Machine replaced or changed since (UID or resourceVersion), or a pod
// recreated under the same name, makes the apiserver answer 409 instead.
type machineDeleter struct {
	dyn    dynamic.Interface
	client kubernetes.Interface
}

func (d *machineDeleter) DeleteMachine(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string) error {
	return d.dyn.Resource(cluster.MachineGVR).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &resourceVersion},
	})
}

func (d *machineDeleter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	grace := int64(0) // the node is unreachable: no kubelet will ever confirm a graceful delete
	opts := metav1.DeleteOptions{GracePeriodSeconds: &grace}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	return d.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
}

// nodePods lists the pods bound to one node, in every namespace, through
// the field selector the apiserver indexes: never a cluster-wide pod list.
type nodePods struct{ client kubernetes.Interface }

func (p *nodePods) PodsOn(ctx context.Context, node string) ([]heal.Pod, error) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	list, err := p.client.CoreV1().Pods("").List(rctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, err
	}
	out := make([]heal.Pod, 0, len(list.Items))
	for _, pod := range list.Items {
		out = append(out, heal.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			NodeName: pod.Spec.NodeName, Terminating: pod.DeletionTimestamp != nil})
	}
	return out, nil
}

// controlPlaneSources reads every source of the control plane's version the
// actor can see, for the upgrade gate, which trusts only their minimum:
//   - the kubelet of each control-plane Node, listed by each control-plane
//     label (ClusterRole kubehz-actor-nodes);
//   - the image tag of each kube-apiserver static pod, listed in kube-system
//     by the labels kubeadm and KubeOne give it (ClusterRole
//     kubehz-actor-pods, the unwedge's list);
//   - /version, which every authenticated identity may read.
//
// A source that cannot be read fails the whole sample: the gate stays
// closed rather than trust the sources left.
type controlPlaneSources struct{ client kubernetes.Interface }

// apiserverPods selects kubeadm's (and so KubeOne's) kube-apiserver static
// pods.
const apiserverPods = "component=kube-apiserver,tier=control-plane"

func (s *controlPlaneSources) ControlPlaneVersions(ctx context.Context) ([]upgrade.VersionReading, error) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var out []upgrade.VersionReading
	seen := map[string]bool{}
	for _, key := range refuse.ControlPlaneLabelKeys() {
		nodes, err := s.client.CoreV1().Nodes().List(rctx, metav1.ListOptions{LabelSelector: key})
		if err != nil {
			return nil, fmt.Errorf("list Nodes labelled %s: %w", key, err)
		}
		for _, n := range nodes.Items {
			if !seen[n.Name] {
				seen[n.Name] = true
				out = append(out, upgrade.VersionReading{Source: "Node " + n.Name, Version: n.Status.NodeInfo.KubeletVersion})
			}
		}
	}
	pods, err := s.client.CoreV1().Pods(metav1.NamespaceSystem).List(rctx, metav1.ListOptions{LabelSelector: apiserverPods})
	if err != nil {
		return nil, fmt.Errorf("list kube-apiserver pods in kube-system: %w", err)
	}
	for _, p := range pods.Items {
		// A pod without a container of that name yields no version, which
		// keeps the gate closed: better than guessing which one it runs.
		r := upgrade.VersionReading{Source: "Pod kube-system/" + p.Name}
		for _, c := range p.Spec.Containers {
			if c.Name == "kube-apiserver" {
				r.Version = upgrade.ImageTag(c.Image)
			}
		}
		out = append(out, r)
	}
	raw, err := s.client.Discovery().RESTClient().Get().AbsPath("/version").Do(rctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("read /version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, fmt.Errorf("decode /version: %w", err)
	}
	return append(out, upgrade.VersionReading{Source: "/version", Version: info.GitVersion}), nil
}
