package cluster

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"kubehz.dev/agent/shared/testkit"
)

// names returns the record names and their replica counts, -1 for unknown.
func names(records map[string]*MachineDeployment) map[string]int64 {
	if records == nil {
		return nil
	}
	out := map[string]int64{}
	for name, r := range records {
		out[name] = -1
		if r.Replicas != nil {
			out[name] = *r.Replicas
		}
	}
	return out
}

func equalCounts(a, b map[string]int64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// eventually polls List until it holds want, failing the test after 10 s.
func eventually(t *testing.T, c *MachineDeployments, want map[string]int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := names(c.List())
		if equalCounts(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("List holds %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// noLeaks checks that every goroutine the informer started has ended. Stop
// waits for the informer's controller, but some reflector goroutines are
// only cancelled, so a loaded machine may still be running them for longer
// than goleak's own retries (under a second) allow: wait up to 10 s first.
func noLeaks(t *testing.T, ignore goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for goleak.Find(ignore) != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	goleak.VerifyNone(t, ignore)
}

func TestCache_EnsureListsThenFollowsTheWatch(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	client := newFakeDynamic(
		machineDeployment(testNamespace, "pool-a", int64(2)),
		machineDeployment(testNamespace, "pool-b", nil),
		machineDeployment("elsewhere", "pool-c", int64(1)),
	)
	c := newMDCache(client)
	if got := c.List(); got != nil {
		t.Fatalf("List before Ensure = %v, want nil", got)
	}
	if err := c.Ensure(t.Context(), t.Context()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	// Synced: the first list is there at once, and only the MD namespace.
	if got, want := names(c.List()), map[string]int64{"pool-a": 2, "pool-b": -1}; !equalCounts(got, want) {
		t.Fatalf("List after Ensure holds %v, want %v", got, want)
	}
	if r := c.List()["pool-a"]; r.Namespace != testNamespace || r.Name != "pool-a" {
		t.Errorf("record of pool-a is %+v, want it keyed by its namespace and name", r)
	}

	// A second Ensure reuses the running informer: still one list.
	if err := c.Ensure(t.Context(), t.Context()); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if n := countVerb(client, "list"); n != 1 {
		t.Errorf("%d lists after two Ensures, want 1", n)
	}

	// A delete the fake makes before the informer's Watch is open is lost
	// for good (it replays only the objects it still holds); Ensure returns
	// once synced, which does not wait for the Watch.
	testkit.Await(t, 10*time.Second, "the informer's watch", func() bool { return countVerb(client, "watch") > 0 })
	mds := client.Resource(MachineDeploymentGVR).Namespace(testNamespace)
	if _, err := mds.Create(t.Context(), machineDeployment(testNamespace, "pool-d", int64(4)), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pool-d: %v", err)
	}
	if err := mds.Delete(t.Context(), "pool-b", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete pool-b: %v", err)
	}
	eventually(t, c, map[string]int64{"pool-a": 2, "pool-d": 4})

	c.Stop()
	if got := c.List(); got != nil {
		t.Errorf("List after Stop = %v, want nil", got)
	}
	noLeaks(t, ignore)

	// Ensure after Stop starts a fresh informer with a fresh list.
	if err := c.Ensure(t.Context(), t.Context()); err != nil {
		t.Fatalf("Ensure after Stop: %v", err)
	}
	if got, want := names(c.List()), map[string]int64{"pool-a": 2, "pool-d": 4}; !equalCounts(got, want) {
		t.Errorf("List after a restart holds %v, want %v", got, want)
	}
	if n := countVerb(client, "list"); n != 2 {
		t.Errorf("%d lists after a restart, want 2", n)
	}
	c.Stop()
	c.Stop() // a second Stop is harmless
	noLeaks(t, ignore)
}

func TestCache_BaseContextBoundsTheInformer(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	c := newMDCache(newFakeDynamic(machineDeployment(testNamespace, "pool-a", int64(2))))
	base, cancel := context.WithCancel(t.Context())
	if err := c.Ensure(base, t.Context()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	cancel()
	// Stop still returns once the informer has ended on its own.
	c.Stop()
	noLeaks(t, ignore)
}

// In a synctest bubble the informer's retries and Ensure's wait run on the
// bubble's clock: the 30 s bound is checked exactly, in no time.
func TestCache_EnsureFailsAfterThirtySecondsWhenListIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newFakeDynamic()
		client.PrependReactor("list", "machinedeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(MachineDeploymentGVR.GroupResource(), "")
		})
		c := newMDCache(client)
		defer c.Stop()

		start := time.Now()
		err := c.Ensure(t.Context(), t.Context())
		elapsed := time.Since(start)
		if err == nil {
			t.Fatal("Ensure succeeded although every list is refused")
		}
		if !strings.Contains(err.Error(), testNamespace) || !strings.Contains(err.Error(), "30s") {
			t.Errorf("error %q should name the namespace and the timeout", err)
		}
		if elapsed != 30*time.Second {
			t.Errorf("Ensure returned after %s, want 30s", elapsed)
		}
		if c.List() == nil {
			t.Error("the informer should keep trying until Stop; List returned nil")
		}
	})
}

func TestCache_EnsureAsksDiscoveryAndNeverListsAnAbsentCRD(t *testing.T) {
	client := newFakeDynamic()
	var calls atomic.Int32
	client.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls.Add(1)
		return false, nil, nil
	})
	client.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		calls.Add(1)
		return false, nil, nil
	})
	var asked []schema.GroupVersionResource
	absent := func(_ context.Context, gvr schema.GroupVersionResource) error {
		asked = append(asked, gvr)
		return apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	c := NewMachineDeployments(client, testNamespace, Options{Served: absent})
	defer c.Stop()

	for range 3 {
		err := c.Ensure(t.Context(), t.Context())
		if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), testNamespace) {
			t.Fatalf("Ensure = %v, want the NotFound naming the namespace", err)
		}
	}
	if len(asked) != 3 || asked[0] != MachineDeploymentGVR {
		t.Errorf("discovery asked about %v, want %v three times", asked, MachineDeploymentGVR)
	}
	if n := calls.Load(); n != 0 || c.List() != nil {
		t.Errorf("%d lists or watches, informer running %t; want none while the CRD is absent", n, c.List() != nil)
	}

	// Once served, the same cache lists and asks discovery no more.
	served := false
	c.served = func(context.Context) error { served = true; return nil }
	if err := c.Ensure(t.Context(), t.Context()); err != nil {
		t.Fatalf("Ensure once served: %v", err)
	}
	served = false
	if err := c.Ensure(t.Context(), t.Context()); err != nil || served {
		t.Errorf("Ensure on a running informer = %v, asked discovery again: %t", err, served)
	}
}

func TestCache_EnsureReturnsWhenTheCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newFakeDynamic()
		client.PrependReactor("list", "machinedeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(MachineDeploymentGVR.GroupResource(), "", nil)
		})
		c := newMDCache(client)
		defer c.Stop()
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := c.Ensure(t.Context(), ctx); err == nil {
			t.Fatal("Ensure succeeded although every list is refused")
		}
		if elapsed := time.Since(start); elapsed != 100*time.Millisecond {
			t.Errorf("Ensure returned %s after it began, want at its caller's deadline of 100ms", elapsed)
		}
	})
}

func TestCache_StopBeforeEnsureIsHarmless(t *testing.T) {
	c := newMDCache(newFakeDynamic())
	c.Stop()
	if got := c.List(); got != nil {
		t.Errorf("List = %v, want nil", got)
	}
}
