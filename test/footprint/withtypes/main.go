// Command withtypes holds a Lease with kubeapi's own Lease type and the REST
// client the observer uses, making the requests an elector makes (a read
// every 2 s, a renewal while it holds the Lease, a release on exit) and
// nothing else. It is a measuring fixture for test/footprint, never shipped,
// and not an elector: it has no jitter, no renew deadline and no defence
// against clock skew. Beside withlibrary it shows what the actor would weigh
// without tools/leaderelection, whose package links every API group.
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
}

func hold(ctx context.Context, cfg *rest.Config, lease fixture.Lease) error {
	client, err := kubeapi.New(cfg)
	if err != nil {
		return err
	}
	h := holder{client: client, namespace: lease.Namespace, name: lease.Name}
	tick := time.NewTicker(retry)
	defer tick.Stop()
	for {
		if err := h.renew(ctx, h.name); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "withtypes: renew:", err)
		}
		select {
		case <-ctx.Done():
			release, cancel := context.WithTimeout(context.Background(), retry)
			defer cancel()
			return h.renew(release, "")
		case <-tick.C:
		}
	}
}

// renew takes or keeps the Lease for holder, or releases it when holder is
// empty; another live holder's Lease is left alone.
func (h holder) renew(ctx context.Context, holder string) error {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(leaseSeconds)
	lease, err := h.client.Leases(h.namespace).Get(ctx, h.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && holder != "" {
		_, err = h.client.Leases(h.namespace).Create(ctx, &kubeapi.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.namespace, Name: h.name},
			Spec:       kubeapi.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	current := lease.Spec.HolderIdentity
	lapsed := lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil ||
		now.After(lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second))
	if current != nil && *current != "" && *current != h.name && !lapsed {
		return nil
	}
	lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds = &holder, &now, &seconds
	lease.APIVersion, lease.Kind = "coordination.k8s.io/v1", "Lease"
	body, err := json.Marshal(lease)
	if err != nil {
		return err
	}
	// The resourceVersion read above rides in the body: a concurrent write
	// makes this one fail with a conflict instead of overwriting it. The
	// body holds only the fields kubeapi's Lease keeps, enough here.
	_, err = h.client.Raw().Put().AbsPath("/apis/coordination.k8s.io/v1/namespaces", h.namespace, "leases", h.name).
		SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx)
	return err
}
