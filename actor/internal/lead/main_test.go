package lead

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

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

// journal records, across goroutines, the order in which things happened.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(entry string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, entry)
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

// journalReleases notes every Lease update that clears the holder, which is
// how client-go's elector releases the lease, at the moment it is sent.
func journalReleases(client *fake.Clientset, j *journal) {
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		lease := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if deref(lease.Spec.HolderIdentity) == "" {
			j.add("lease released")
		}
		return false, nil, nil
	})
}

// running is one Run in flight; the test's cleanup cancels it and waits.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func startRun(t *testing.T, cfg Config, fenced <-chan struct{}, work Work) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = Run(ctx, cfg, fenced, work)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			t.Errorf("Run of %s did not return after cancel", cfg.Identity)
		}
	})
	return r
}

// wait returns Run's error, failing the test if Run is still going after within.
func (r *running) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(within):
		t.Fatalf("Run did not return within %s", within)
		return nil
	}
}

func (r *running) returned() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
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

var errApiserverDown = errors.New("apiserver unavailable")
