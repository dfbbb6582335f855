package machines

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// Source publishes machineIssues and pools from the machine-controller
// objects in one namespace, recomputed every interval.
type Source struct {
	namespace   string
	events      func() []*cluster.Event
	clk         clock.Clock
	interval    time.Duration
	notify      func()
	machines    *gate
	deployments *gate
	due         chan struct{} // a gate changed readability: pass now

	seen Seen // only Run's goroutine touches it
	// ready is set by the first pass after both gates settled: the lists
	// then say what the cluster has, not that nothing was read yet.
	ready atomic.Bool

	mu     sync.Mutex
	issues []wire.MachineIssue
	pools  []wire.Pool
}

// Options are how a Source fits the rest of the observer; every field may
// be left zero.
type Options struct {
	Events   func() []*cluster.Event // the cached Warning events; nil: none
	Interval time.Duration           // between passes; zero or less: one minute
	Log      *slog.Logger            // nil: discard
	Notify   func()                  // called whenever the issues or the pools change; nil: nobody
}

// New builds a Source over the machine-controller objects in namespace;
// nothing talks to the apiserver until Run. served asks discovery whether a
// resource is there.
func New(dyn dynamic.Interface, served kubeapi.ServedFunc, namespace string, clk clock.Clock, opts Options) *Source {
	interval, log := opts.Interval, opts.Log
	if interval <= 0 {
		interval = time.Minute // the contract's default; a zero timer would spin
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Source{
		namespace: namespace, events: opts.Events, clk: clk, interval: interval, notify: opts.Notify,
		due: make(chan struct{}, 1),
	}
	signal := func() {
		select {
		case s.due <- struct{}{}:
		default:
		}
	}
	newGate := func(what, omitted string, gvr schema.GroupVersionResource, t cache.TransformFunc) *gate {
		// A kustomize namespace: overlay moves the Role out of the MD
		// namespace unless the overlay moves it back.
		forbidden := fmt.Sprintf("a Role in namespace %s allowing get, list and watch on %s.%s, bound to this "+
			"ServiceAccount: deploy/observer ships kubehz-observer-machines there; a namespace: overlay moves it "+
			"away unless it moves it back (README, Overlays)", namespace, gvr.Resource, gvr.Group)
		return &gate{what: what, omitted: omitted, forbidden: forbidden, client: dyn, resource: dyn.Resource(gvr).Namespace(namespace),
			served:    func(ctx context.Context) error { return served(ctx, gvr) },
			transform: t, clk: clk, interval: interval, changed: signal, log: log.With("namespace", namespace)}
	}
	s.machines = newGate("Machines", "machineIssues omitted", MachinesResource, machineTransform)
	s.deployments = newGate("MachineDeployments", "pools omitted and machines resolve to pool unknown",
		DeploymentsResource, deploymentTransform)
	return s
}

// Run keeps both informers gated on readability and recomputes every
// interval, and as soon as either resource syncs or becomes unreadable. It
// returns nil once ctx is done and every goroutine it started has ended.
func (s *Source) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.machines.run(ctx) })
	wg.Go(func() { s.deployments.run(ctx) })
	tick := s.clk.NewTimer(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.due:
		case <-tick.C():
			tick.Reset(s.interval)
		}
		s.pass()
	}
}

// pass recomputes both lists from the caches.
func (s *Source) pass() {
	settled := s.machines.settled.Load() && s.deployments.settled.Load()
	defer func() { s.ready.Store(s.ready.Load() || settled) }()
	mds := records[*MachineDeployment](s.deployments)
	var issues []wire.MachineIssue
	if machines, ok := s.machines.records(); ok {
		o := Observed{Namespace: s.namespace, Machines: informer.Records[*Machine](machines), Deployments: mds}
		if s.events != nil {
			o.Events = s.events()
		}
		issues, s.seen = Issues(o, s.seen, s.clk.Now())
	} else {
		s.seen = nil // unreadable clears the set; a recurrence is dated anew
	}
	s.publish(issues, Pools(mds))
}

// publish stores the lists and notifies only when either actually changed,
// so none→none and same→same cause no beat.
func (s *Source) publish(issues []wire.MachineIssue, pools []wire.Pool) {
	s.mu.Lock()
	changed := !slices.Equal(s.issues, issues) || !slices.Equal(s.pools, pools)
	s.issues, s.pools = issues, pools
	s.mu.Unlock()
	if changed && s.notify != nil {
		s.notify()
	}
}

// HasSynced reports whether a pass has run since both resources were first
// read, or found unreadable: before that, absent lists would tell the
// platform to clear what it knows.
func (s *Source) HasSynced() bool { return s.ready.Load() }

// Sizes counts the cached Machines and the pools of the last pass, for the
// status file; machines is 0 while they are unreadable.
func (s *Source) Sizes() (machines, pools int) {
	items, _ := s.machines.records()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(items), len(s.pools)
}

// Issues returns a copy of the last pass's issues; nil when there are none,
// so the key is omitted and the platform clears its list.
func (s *Source) Issues() []wire.MachineIssue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issues)
}

// Pools returns a copy of the last pass's pools, sorted by name; nil when no
// MachineDeployment exists or none is readable.
func (s *Source) Pools() []wire.Pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pools)
}

func records[T any](g *gate) []T {
	items, _ := g.records()
	return informer.Records[T](items)
}
