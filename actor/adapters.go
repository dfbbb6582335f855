package main

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/actor/internal/lead"
	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/scale"
)

// mdPatcher sends the decided JSON merge patch. The body carries the
// resourceVersion the decision was made on, so the apiserver refuses (409) a
// patch decided on a stale read.
type mdPatcher struct{ dyn dynamic.Interface }

func (p *mdPatcher) PatchMD(ctx context.Context, namespace, name string, body []byte) error {
	_, err := p.dyn.Resource(cluster.GVR).Namespace(namespace).Patch(ctx, name, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: scale.FieldManager})
	return err
}

// eventRecorder writes Events directly, synchronously and fenced like every
// other write: no background broadcaster that could still be sending after
// the lease is gone.
type eventRecorder struct {
	client   kubernetes.Interface
	fence    *lead.Fence
	identity string
	log      *slog.Logger
}

func (r *eventRecorder) MDEvent(ctx context.Context, md *cluster.Record, warning bool, reason, message string) {
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
		ObjectMeta: metav1.ObjectMeta{GenerateName: md.Name + ".", Namespace: md.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment",
			Namespace: md.Namespace, Name: md.Name, UID: md.UID, ResourceVersion: md.ResourceVersion,
		},
		Type: typ, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: "kubehz-actor"},
		ReportingController: "kubehz.dev/actor", ReportingInstance: r.identity,
	}
	if _, err := r.client.CoreV1().Events(md.Namespace).Create(wctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Warn("Cannot record an Event on the MachineDeployment", "machineDeployment", md.Namespace+"/"+md.Name, "err", err)
	}
}
