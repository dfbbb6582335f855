package machines

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// patience bounds real time spent waiting on informers; a deadline for a
// hung test, never a delay a passing test sits through.
const patience = 10 * time.Second

// access switches the fake apiserver between the states a cluster can be in.
const (
	absent int32 = iota
	readable
	machinesForbidden
)

// apiserver is a fake dynamic client whose machine-controller resources can
// be absent, readable, or Forbidden, and which counts who asks.
type apiserver struct {
	*fake.FakeDynamicClient
	state         atomic.Int32
	probes        atomic.Int32 // discovery requests
	informerCalls atomic.Int32 // full Lists and Watches

	mu      sync.Mutex
	watches []watch.Interface // live Machine watches
}

func newAPIServer() *apiserver {
	a := &apiserver{FakeDynamicClient: fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{MachinesResource: "MachineList", DeploymentsResource: "MachineDeploymentList"})}
	a.PrependReactor("list", "*", func(act clienttesting.Action) (bool, runtime.Object, error) {
		a.informerCalls.Add(1)
		return a.deny(act.GetResource())
	})
	a.PrependWatchReactor("*", func(act clienttesting.Action) (bool, watch.Interface, error) {
		a.informerCalls.Add(1)
		if denied, _, err := a.deny(act.GetResource()); denied {
			return true, nil, err
		}
		w, err := a.Tracker().Watch(act.GetResource(), act.GetNamespace())
		if err == nil && act.GetResource() == MachinesResource {
			a.mu.Lock()
			a.watches = append(a.watches, w)
			a.mu.Unlock()
		}
		return true, w, err
	})
	return a
}

// served answers as discovery would: NotFound while the CRDs are absent.
func (a *apiserver) served(_ context.Context, gvr schema.GroupVersionResource) error {
	a.probes.Add(1)
	if a.state.Load() == absent {
		return apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return nil
}

func (a *apiserver) deny(gvr schema.GroupVersionResource) (bool, runtime.Object, error) {
	switch state := a.state.Load(); {
	case state == absent:
		return true, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	case state == machinesForbidden && gvr == MachinesResource:
		return true, nil, apierrors.NewForbidden(gvr.GroupResource(), "", errors.New("RBAC denies list"))
	}
	return false, nil, nil
}

// dropMachineWatches ends every Machine watch, as an RBAC change would.
func (a *apiserver) dropMachineWatches() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.watches {
		w.Stop()
	}
	a.watches = nil
}
