package machines

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

// docs/contract.md#cadence: the machine issues and pools are a change only
// when they differ.
func TestSource_NotifiesOnlyWhenTheListsChange(t *testing.T) {
	a := []wire.MachineIssue{{Pool: "p", Machine: "m", Reason: "CreateError", Since: since}}
	b := []wire.MachineIssue{{Pool: "p", Machine: "m", Reason: "CreateError", Message: "x", Since: since}}
	pools := []wire.Pool{{Name: "p", Replicas: 1, APIGroup: APIGroup}}
	steps := []struct {
		name   string
		issues []wire.MachineIssue
		pools  []wire.Pool
		notify bool
	}{
		{"none to none is silent", nil, nil, false},
		{"a first issue notifies", a, nil, true},
		{"a repeated identical set is silent", []wire.MachineIssue{a[0]}, nil, false},
		{"a changed message notifies", b, nil, true},
		{"a clear notifies", nil, nil, true},
		{"a repeated clear is silent", nil, nil, false},
		{"a new pool notifies", nil, pools, true},
		{"the same pool is silent", nil, []wire.Pool{pools[0]}, false},
		{"pools gone notify", nil, nil, true},
	}
	calls := 0
	s := &Source{notify: func() { calls++ }}
	for _, st := range steps {
		before := calls
		s.publish(st.issues, st.pools)
		if got := calls > before; got != st.notify {
			t.Errorf("%s: notified = %v", st.name, got)
		}
		if !reflect.DeepEqual(s.Issues(), st.issues) || !reflect.DeepEqual(s.Pools(), st.pools) {
			t.Errorf("%s: snapshot = %+v %+v", st.name, s.Issues(), s.Pools())
		}
	}
	s.publish(a, pools)
	s.Issues()[0].Pool = "changed by a caller"
	if s.Issues()[0].Pool != "p" {
		t.Error("Issues returned the stored slice, not a copy")
	}
}

// The gating: no CRD means one quiet discovery request per interval, no list
// and no informer; once the resources appear the records flow; a later
// Forbidden stops the Machine informer, clears the issues with one
// notification, and from then on each interval costs one discovery request
// and one refused list.
func TestSource_GatesInformersOnReadability(t *testing.T) {
	const interval = time.Minute
	api := newAPIServer()
	clk := clocktesting.NewFakeClock(now)
	logs := &testkit.Logs{}
	var notified atomic.Int32
	events := []*cluster.Event{machineEvent("e", "m-2", "ReconcilingError", "unsupported location", now)}
	s := New(api, api.served, ns, clk, Options{
		Events:   func() []*cluster.Event { return events },
		Interval: interval,
		Log:      logs.Logger(),
		Notify:   func() { notified.Add(1) },
	})

	testkit.Start(t, patience, s.Run)

	// Absent: each gate probes once per interval, waiting on the clock (the
	// pass timer and two probe timers), and nothing else happens.
	for step := 1; step <= 4; step++ {
		testkit.Await(t, patience, "probes", func() bool { return api.probes.Load() == int32(2*step) && clk.Waiters() == 3 })
		if step < 4 {
			clk.Step(interval)
		}
	}
	if n := api.informerCalls.Load(); n != 0 {
		t.Errorf("%d informer lists or watches while the CRDs are absent", n)
	}
	if s.Issues() != nil || s.Pools() != nil || notified.Load() != 0 {
		t.Errorf("absent: issues %v, pools %v, %d notifications", s.Issues(), s.Pools(), notified.Load())
	}
	for _, what := range []string{`"Machines not readable`, `"MachineDeployments not readable`} {
		if n := logs.Count(what, "NotFound"); n != 1 {
			t.Errorf("%s logged %d times over 4 intervals, want once", what, n)
		}
	}

	// The resources appear.
	create(t, api, DeploymentsResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"MachineDeployment",
		"metadata":{"name":"pool-a","namespace":"kube-system"},
		"spec":{"replicas":2,"selector":{"matchLabels":{"pool":"pool-a"}}},"status":{"readyReplicas":1}}`)
	create(t, api, MachinesResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"Machine",
		"metadata":{"name":"m-1","namespace":"kube-system","labels":{"pool":"pool-a"}},
		"status":{"nodeRef":{"name":"n-1"},"errorReason":"CreateError","errorMessage":"quota"}}`)
	create(t, api, MachinesResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"Machine",
		"metadata":{"name":"m-2","namespace":"kube-system","labels":{"pool":"pool-a"}},"status":{"nodeRef":{"name":"n-2"}}}`)
	api.state.Store(readable)
	clk.Step(interval)
	stamp := clk.Now().UTC().Format(time.RFC3339)
	wantIssues := []wire.MachineIssue{
		{Pool: "pool-a", Machine: "m-1", Reason: "CreateError", Message: "quota", Since: stamp},
		{Pool: "pool-a", Machine: "m-2", Reason: "ReconcilingError", Message: "unsupported location", Since: stamp},
	}
	wantPools := []wire.Pool{{Name: "pool-a", Replicas: 2, Ready: 1, APIGroup: APIGroup}}
	testkit.Await(t, patience, "records", func() bool {
		return reflect.DeepEqual(s.Issues(), wantIssues) && reflect.DeepEqual(s.Pools(), wantPools)
	})
	testkit.Await(t, patience, "the Machine watch", func() bool { api.mu.Lock(); defer api.mu.Unlock(); return len(api.watches) > 0 })

	// Machines become Forbidden mid-watch.
	before := notified.Load()
	api.state.Store(machinesForbidden)
	api.dropMachineWatches()
	testkit.Await(t, patience, "issues cleared", func() bool { return s.Issues() == nil })
	testkit.Await(t, patience, "a probe waiting", func() bool { return clk.Waiters() == 2 })
	for range 3 {
		probes, calls := api.probes.Load(), api.informerCalls.Load()
		clk.Step(interval)
		testkit.Await(t, patience, "a probe", func() bool { return api.probes.Load() == probes+1 && clk.Waiters() == 2 })
		if n := api.informerCalls.Load() - calls; n != 1 {
			t.Errorf("%d lists or watches in an interval while Forbidden, want the 1 refused list", n)
		}
	}
	if got := notified.Load() - before; got != 1 {
		t.Errorf("%d notifications for the clear, want 1", got)
	}
	if !reflect.DeepEqual(s.Pools(), wantPools) {
		t.Errorf("pools = %+v, want them kept while MDs stay readable", s.Pools())
	}
	if n := logs.Count(`"Machines not readable`, "Forbidden"); n != 1 {
		t.Errorf("Forbidden logged %d times, want once", n)
	}
	// The line says what to check, in the namespace the Role must be in.
	if n := logs.Count(`"Machines not readable`, `"check":"a Role in namespace kube-system allowing get, list and watch on machines.cluster.k8s.io`); n != 1 {
		t.Error("the Forbidden line does not say which Role to check")
	}
}

func create(t *testing.T, api *apiserver, gvr schema.GroupVersionResource, js string) {
	t.Helper()
	if _, err := api.Resource(gvr).Namespace(ns).Create(t.Context(), obj(t, js), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSource_KeepsMachinesWhileARestartedAPIServerServesItsCRDsAgain: an
// apiserver that restarts answers NotFound for a CRD until it serves it
// again. The records stay while discovery is asked after 1, 2, 4, 8 and 16
// seconds; found again, the watch resumes and nothing was cleared. Still
// absent after the last ask, the records go and the gate falls back to
// asking once an interval.
func TestSource_KeepsMachinesWhileARestartedAPIServerServesItsCRDsAgain(t *testing.T) {
	const interval = time.Minute
	api := newAPIServer()
	api.state.Store(readable)
	create(t, api, DeploymentsResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"MachineDeployment",
		"metadata":{"name":"pool-a","namespace":"kube-system"},"spec":{"replicas":1,"selector":{"matchLabels":{"pool":"pool-a"}}}}`)
	create(t, api, MachinesResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"Machine",
		"metadata":{"name":"m-1","namespace":"kube-system","labels":{"pool":"pool-a"}},
		"status":{"nodeRef":{"name":"n-1"},"errorReason":"CreateError","errorMessage":"quota"}}`)
	clk := clocktesting.NewFakeClock(now)
	logs := &testkit.Logs{}
	var notified atomic.Int32
	s := New(api, api.served, ns, clk, Options{
		Events:   func() []*cluster.Event { return nil },
		Interval: interval,
		Log:      logs.Logger(),
		Notify:   func() { notified.Add(1) },
	})
	testkit.Start(t, patience, s.Run)
	testkit.Await(t, patience, "the pool and the machine's issue", func() bool { return len(s.Pools()) == 1 && len(s.Issues()) == 1 })
	testkit.Await(t, patience, "the Machine watch", func() bool { api.mu.Lock(); defer api.mu.Unlock(); return len(api.watches) > 0 })

	// The apiserver restarts: the Machine watch ends, and the relist and
	// discovery both answer NotFound.
	lose := func() {
		t.Helper()
		api.state.Store(absent)
		api.dropMachineWatches()
	}
	// ask steps the clock to the gate's next recheck and waits for the ask;
	// the timer must exist first (the pass timer is the other waiter), or
	// the step would pass before it was set.
	ask := func(after time.Duration) {
		t.Helper()
		testkit.Await(t, patience, "a recheck timer", func() bool { return clk.Waiters() == 2 })
		probes := api.probes.Load()
		clk.Step(after - time.Nanosecond)
		if api.probes.Load() != probes {
			t.Fatalf("discovery asked before %s had passed", after)
		}
		clk.Step(time.Nanosecond)
		testkit.Await(t, patience, fmt.Sprintf("the ask after %s", after), func() bool { return api.probes.Load() == probes+1 })
	}

	before := notified.Load()
	lose()
	ask(time.Second)
	if len(s.Issues()) != 1 {
		t.Fatalf("issues %v dropped while discovery is still being asked", s.Issues())
	}
	api.state.Store(readable)
	ask(2 * time.Second)
	testkit.Await(t, patience, "the Machine watch again", func() bool { api.mu.Lock(); defer api.mu.Unlock(); return len(api.watches) > 0 })
	if len(s.Issues()) != 1 {
		t.Errorf("issues %v after the CRD was served again, want the machine's", s.Issues())
	}
	if n := notified.Load() - before; n != 0 {
		// The lists never changed; a clear and a refill would be two beats.
		t.Errorf("%d notifications across the restart, want none", n)
	}
	if n := logs.Count(`"Machines not readable`); n != 0 {
		t.Errorf("logged %d times that Machines are not readable, though they came back", n)
	}

	// This time the CRD stays gone: after the fifth ask the records go.
	before = notified.Load()
	lose()
	for i, after := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second} {
		if len(s.Issues()) != 1 {
			t.Fatalf("issues dropped before ask %d", i+1)
		}
		ask(after)
	}
	testkit.Await(t, patience, "issues cleared", func() bool { return s.Issues() == nil })
	// Back to asking once an interval: the pass timer and the interval timer.
	testkit.Await(t, patience, "the interval timer", func() bool { return clk.Waiters() == 2 })
	probes := api.probes.Load()
	clk.Step(interval - time.Nanosecond)
	if api.probes.Load() != probes {
		t.Error("discovery asked again before an interval had passed")
	}
	if n := notified.Load() - before; n != 1 {
		t.Errorf("%d notifications for the clear, want 1", n)
	}
	if n := logs.Count(`"Machines not readable`, "NotFound"); n != 1 {
		t.Errorf("NotFound logged %d times, want once", n)
	}
}

// The observer's first beat waits for HasSynced: it must not come before a
// pass has run on what both resources held when first read, or, with the
// CRDs absent, before both were found unreadable, which needs no tick of
// the clock. Readable, the pools are there by then.
func TestSource_HasSyncedOnceAPassFollowsBothFirstReads(t *testing.T) {
	for _, readableAtStart := range []bool{false, true} {
		t.Run(fmt.Sprintf("readable %v", readableAtStart), func(t *testing.T) {
			api := newAPIServer()
			if readableAtStart {
				create(t, api, DeploymentsResource, `{"apiVersion":"cluster.k8s.io/v1alpha1","kind":"MachineDeployment",
					"metadata":{"name":"pool-a","namespace":"kube-system"},"spec":{"replicas":2}}`)
				api.state.Store(readable)
			}
			clk := clocktesting.NewFakeClock(now)
			s := New(api, api.served, ns, clk, Options{Interval: time.Minute})
			if s.HasSynced() {
				t.Fatal("synced before Run")
			}
			testkit.Start(t, patience, s.Run)
			testkit.Await(t, patience, "HasSynced", s.HasSynced)
			if got := len(s.Pools()); readableAtStart && got != 1 {
				t.Errorf("synced with %d pools, want pool-a", got)
			}
		})
	}
}
