package cluster

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// Options say what the caches keep.
type Options struct {
	// Events say what an event record keeps; their Now is read from Now for
	// each event.
	Events EventOptions
	Now    func() time.Time
}

// Cache watches nodes, pods and Warning events. Its handlers only signal
// Changed; the heartbeat reads the stores when it is due.
type Cache struct {
	nodes       cache.Store
	controllers []cache.Controller
	pods        *podStore
	events      *eventStore
	reflectors  []*cache.Reflector
	changed     chan struct{}
}

// Source is where the caches read from: kubeapi's resources in
// production, fake typed clients served through kubeapitest in unit tests.
type Source struct {
	Nodes  kubeapi.Reader[*kubeapi.NodeList]
	Pods   kubeapi.Reader[*kubeapi.PodPhaseList] // every namespace
	Events kubeapi.Reader[*kubeapi.EventList]    // every namespace
}

// New builds the informers; nothing talks to the apiserver until Run.
func New(src Source, opts Options) *Cache {
	c := &Cache{changed: make(chan struct{}, 1)}
	c.nodes = c.add(&kubeapi.Node{}, nodeTransform, kubeapi.ListWatch(src.Nodes, kubeapi.Selectors{}))
	// Pods need no handlers and no records: a reflector writes straight
	// into the counting store.
	c.pods = newPodStore(c.Signal)
	c.reflectors = append(c.reflectors, cache.NewReflectorWithOptions(kubeapi.ListWatch(src.Pods, kubeapi.Selectors{}),
		&kubeapi.PodPhase{}, c.pods, cache.ReflectorOptions{Name: "pods", TypeDescription: "*v1.Pod"}))
	// Only Warning events are ever reported, so the apiserver filters the
	// rest out before they cost a byte of memory here; the store bounds the
	// rest, and its list keeps to that bound while it reads (eventlist.go).
	warnings := kubeapi.Selectors{Field: fields.OneTermEqualSelector("type", kubeapi.EventTypeWarning).String()}
	c.events = newEventStore(opts.Events, opts.Now, MaxEventRecords, c.Signal)
	c.reflectors = append(c.reflectors, cache.NewReflectorWithOptions(c.events.listerWatcher(src.Events, warnings),
		&kubeapi.Event{}, c.events, cache.ReflectorOptions{Name: "events", TypeDescription: "*v1.Event"}))
	return c
}

func (c *Cache) add(example runtime.Object, t cache.TransformFunc, lw cache.ListerWatcher) cache.Store {
	signal := c.Signal
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    example,
		// Resync 0: the watch is the only source of truth; a periodic resync
		// would only produce false change signals.
		ResyncPeriod: 0,
		Transform:    t,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { signal() },
			// A kubelet re-posts its Node's status every few minutes with
			// nothing the beat reads changed: at 5,000 nodes that is an update
			// every few milliseconds, which would keep the view dirty and the
			// beat at its minimum gap. Only a change of the record counts, as
			// only a change of phase counts for pods.
			UpdateFunc: func(old, new any) {
				if !sameRecord(old, new) {
					signal()
				}
			},
			DeleteFunc: func(any) { signal() },
		},
	})
	c.controllers = append(c.controllers, ctrl)
	return store
}

// sameRecord reports whether an update left a node record as it was; the
// informers here hold nodes only (pods and events have stores of their own).
func sameRecord(old, new any) bool {
	o, ok := old.(*Node)
	n, ok2 := new.(*Node)
	return ok && ok2 && *o == *n
}

// Run runs every informer until ctx is done.
func (c *Cache) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, ctrl := range c.controllers {
		wg.Go(func() { ctrl.RunWithContext(ctx) })
	}
	for _, r := range c.reflectors {
		wg.Go(func() { r.RunWithContext(ctx) })
	}
	wg.Wait()
}

// WaitForSync blocks until every informer has listed once, or ctx is done.
func (c *Cache) WaitForSync(ctx context.Context) bool {
	synced := []cache.InformerSynced{c.pods.synced.Load, c.events.synced.Load}
	for _, ctrl := range c.controllers {
		synced = append(synced, ctrl.HasSynced)
	}
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}

// Signal marks the view changed; other sources of beat content (the
// heartbeat-owner marker, machine issues, the inventory) share the one
// change channel this way.
func (c *Cache) Signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// Changed receives a signal after any add or delete, and any update that
// changed a record or a pod's phase; bursts collapse into one pending signal.
func (c *Cache) Changed() <-chan struct{} { return c.changed }

// Nodes returns the cached node records; callers must not modify them.
func (c *Cache) Nodes() []*Node { return informer.Records[*Node](c.nodes.List()) }

// Pods counts the pods by phase and, when byNamespace, by namespace.
func (c *Cache) Pods(byNamespace bool) wire.Pods { return c.pods.Summary(byNamespace) }

// Events returns the cached Warning event records; callers must not modify them.
func (c *Cache) Events() []*Event { return informer.Records[*Event](c.events.List()) }

// Sizes counts what the caches hold, for the status file: cheaper than
// Nodes, Pods and Events, which copy or tally.
func (c *Cache) Sizes() (nodes, pods, events int) {
	return len(c.nodes.ListKeys()), c.pods.len(), c.events.len()
}
