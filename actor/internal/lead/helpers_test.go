package lead

import (
	"context"
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	testNamespace  = "kubehz-system"
	testLease      = "kubehz-actor"
	testDeployment = "actor"
)

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func candidate(client *fake.Clientset, identity string) Config {
	return Config{Client: client, Namespace: testNamespace, LeaseName: testLease, Deployment: testDeployment,
		Identity: identity, Log: discardLog()}
}

// actorDeployment is the actor's own Deployment, optionally being deleted.
func actorDeployment(deleting bool) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testDeployment}}
	if deleting {
		now := metav1.Now()
		d.DeletionTimestamp = &now
		d.Finalizers = []string{"foregroundDeletion"}
	}
	return d
}

// heldLease is the Lease as another process holding it would have written it.
func heldLease(holder string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(renewed)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &seconds,
			AcquireTime:          &renew,
			RenewTime:            &renew,
		},
	}
}

// holderOf reads who holds the Lease now; "" when nobody does or it is missing.
func holderOf(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(testNamespace).Get(context.Background(), testLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatalf("get the lease: %v", err)
	}
	return deref(lease.Spec.HolderIdentity)
}

func receive[T any](t *testing.T, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("%s did not happen within %s", what, within)
		var zero T
		return zero
	}
}
