package lead

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

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

// newClient is a fake clientset holding objects and, unless they include a
// Lease, the Lease as deploy/actor ships it: unheld. Its Lease updates carry
// the apiserver's precondition, which the fake's tracker skips: an update
// made from a stale read is a Conflict, so two candidates that both read
// the unheld Lease cannot both take it.
func newClient(objects ...runtime.Object) *fake.Clientset {
	if !slices.ContainsFunc(objects, func(o runtime.Object) bool { _, ok := o.(*coordinationv1.Lease); return ok }) {
		objects = append(objects, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testLease}})
	}
	client := fake.NewClientset(objects...)
	var mu sync.Mutex
	version := 0
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		lease := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		gvr := action.GetResource()
		current, err := client.Tracker().Get(gvr, lease.Namespace, lease.Name)
		if err != nil {
			return true, nil, err
		}
		if lease.ResourceVersion != current.(*coordinationv1.Lease).ResourceVersion {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), lease.Name, errors.New("the object has been modified"))
		}
		version++
		lease.ResourceVersion = strconv.Itoa(version)
		return true, lease, client.Tracker().Update(gvr, lease, lease.Namespace)
	})
	return client
}

// running is one Run in flight; the test's cleanup cancels it and waits.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func startRun(t *testing.T, cfg Config, killed <-chan struct{}, work Work) *running {
	t.Helper()
	return startRunIn(t, t.Context(), cfg, killed, work)
}

// startRunIn is startRun under parent, which may carry a logger for
// client-go's elector.
func startRunIn(t *testing.T, parent context.Context, cfg Config, killed <-chan struct{}, work Work) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = Run(ctx, cfg, killed, work)
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

var errApiserverDown = errors.New("apiserver unavailable")

type slowLock struct {
	resourcelock.Interface
	calls   int
	advance func()
}

func (s *slowLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	s.calls++
	return &resourcelock.LeaderElectionRecord{}, nil, nil
}

func (s *slowLock) Create(context.Context, resourcelock.LeaderElectionRecord) error {
	s.calls++
	return nil
}

func (s *slowLock) Describe() string { return "kubehz-system/kubehz-actor" }

func (s *slowLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	s.calls++
	if s.advance != nil {
		s.advance()
	}
	return nil
}

type countingTransport struct{ calls int }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.calls++
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

type closeRecorder struct{ closed bool }

func (c *closeRecorder) Read([]byte) (int, error) { return 0, io.EOF }

func (c *closeRecorder) Close() error { c.closed = true; return nil }
