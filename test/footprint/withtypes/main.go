// Command withtypes holds a Lease with kubeapi's own Lease type and the REST
// client the observer uses, at client-go's cadence: while it holds the
// Lease it renews every 2 s by writing back the Lease its last write
// returned, reads only to start or after a conflict, and releases the Lease
// on SIGTERM. Unlike client-go it speaks JSON, as the observer does for
// Leases. It is a measuring fixture for test/footprint, never shipped, and
// not an elector: it never waits out another holder, and has no jitter, no
// renew deadline and no defence against clock skew. Beside withlibrary it
// shows what the actor would weigh without tools/leaderelection, whose
// package links every API group.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/test/footprint/fixture"
)

const (
	leaseSeconds = 15
	retry        = 2 * time.Second
)

func main() { fixture.Main("withtypes", hold) }

type holder struct {
	client          *kubeapi.Client
	namespace, name string
	// last is the Lease as the last successful write returned it; nil
	// until the first one and after a failed one.
	last *kubeapi.Lease
}

func hold(ctx context.Context, cfg *rest.Config, lease fixture.Lease) error {
	client, err := kubeapi.New(cfg)
	if err != nil {
		return err
	}
	h := &holder{client: client, namespace: lease.Namespace, name: lease.Name}
	tick := time.NewTicker(retry)
	defer tick.Stop()
	for {
		if err := h.write(ctx, h.name); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "withtypes: renew:", err)
		}
		select {
		case <-ctx.Done():
			return h.release()
		case <-tick.C:
		}
	}
}

// release hands the Lease back, trying again after a conflict with a
// renewal that was still in flight, as client-go does.
func (h *holder) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	for range 3 {
		if err = h.write(ctx, ""); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// write sets the Lease's holder to identity ("" releases it) and renews
// it, creating the Lease if it does not exist yet.
func (h *holder) write(ctx context.Context, identity string) error {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(leaseSeconds)
	lease := h.last
	h.last = nil
	if lease == nil {
		var err error
		lease, err = h.client.Leases(h.namespace).Get(ctx, h.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && identity != "" {
			h.last, err = h.client.Leases(h.namespace).Create(ctx, &kubeapi.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: h.namespace, Name: h.name},
				Spec:       kubeapi.LeaseSpec{HolderIdentity: &identity, LeaseDurationSeconds: &seconds, RenewTime: &now},
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
	}
	lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds = &identity, &now, &seconds
	lease.APIVersion, lease.Kind = "coordination.k8s.io/v1", "Lease"
	body, err := json.Marshal(lease)
	if err != nil {
		return err
	}
	// The resourceVersion of the Lease last seen rides in the body: a
	// concurrent write makes this one fail with a conflict instead of
	// overwriting it. The body holds only the fields kubeapi's Lease keeps,
	// enough here. The raw client would accept protobuf, as the agents'
	// configuration asks, so the answer is asked for in JSON.
	raw, err := h.client.Raw().Put().AbsPath("/apis/coordination.k8s.io/v1/namespaces", h.namespace, "leases", h.name).
		SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").Body(body).DoRaw(ctx)
	if err != nil {
		return err
	}
	written := &kubeapi.Lease{}
	if err := json.Unmarshal(raw, written); err != nil {
		return err
	}
	h.last = written
	return nil
}
