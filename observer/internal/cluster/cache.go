package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Options say what the caches keep.
type Options struct {
	// KeepEventMessages keeps Warning event messages in memory; only needed
	// when notes may leave the cluster.
	KeepEventMessages bool
}

// Cache watches nodes, pods and Warning events. Its handlers only signal
// Changed; the heartbeat reads the stores when it is due.
type Cache struct {
	nodes, pods, events cache.Store
	controllers         []cache.Controller
	changed             chan struct{}
}

// New builds the informers; nothing talks to the apiserver until Run.
func New(client kubernetes.Interface, opts Options) *Cache {
	c := &Cache{changed: make(chan struct{}, 1)}
	core := client.CoreV1()
	nodes, pods, events := core.Nodes(), core.Pods(""), core.Events("")
	c.nodes = c.add(&corev1.Node{}, nodeTransform, ListWatch(client, "", nodes.List, nodes.Watch))
	c.pods = c.add(&corev1.Pod{}, podTransform, ListWatch(client, "", pods.List, pods.Watch))
	// Only Warning events are ever reported, so the apiserver filters the
	// rest out before they cost a byte of memory here.
	warnings := fields.OneTermEqualSelector("type", corev1.EventTypeWarning).String()
	c.events = c.add(&corev1.Event{}, eventTransform(opts.KeepEventMessages), ListWatch(client, warnings, events.List, events.Watch))
	return c
}

// listWatch tells the reflector, through the wrapper, whether client can
// stream the initial list (WatchList). Fake clientsets cannot; unwrapped, an
// informer over one waits for an end-of-list bookmark that never comes.
// ListWatch lists and watches with fieldSelector applied. Typed list
// functions (core.Pods("").List) are accepted as they are, and the result
// tells client-go whether the client can stream its initial list.
func ListWatch[L runtime.Object](client kubernetes.Interface, fieldSelector string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return watchFn(ctx, o)
		},
	}, client)
}

// Named is the field selector for the one object called name. RBAC that
// grants list and watch by resourceName admits only requests carrying it.
func Named(name string) string { return fields.OneTermEqualSelector("metadata.name", name).String() }

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
			AddFunc:    func(any) { signal() },
			UpdateFunc: func(any, any) { signal() },
			DeleteFunc: func(any) { signal() },
		},
	})
	c.controllers = append(c.controllers, ctrl)
	return store
}

// Run runs every informer until ctx is done.
func (c *Cache) Run(ctx context.Context) {
	done := make(chan struct{}, len(c.controllers))
	for _, ctrl := range c.controllers {
		go func() {
			ctrl.RunWithContext(ctx)
			done <- struct{}{}
		}()
	}
	for range c.controllers {
		<-done
	}
}

// WaitForSync blocks until every informer has listed once, or ctx is done.
func (c *Cache) WaitForSync(ctx context.Context) bool {
	synced := make([]cache.InformerSynced, 0, len(c.controllers))
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

// Changed receives a signal after any add, update or delete; bursts collapse
// into one pending signal.
func (c *Cache) Changed() <-chan struct{} { return c.changed }

// Nodes returns the cached node records; callers must not modify them.
func (c *Cache) Nodes() []*Node { return typed[*Node](c.nodes) }

// Pods returns the cached pod records; callers must not modify them.
func (c *Cache) Pods() []*Pod { return typed[*Pod](c.pods) }

// Events returns the cached Warning event records; callers must not modify them.
func (c *Cache) Events() []*Event { return typed[*Event](c.events) }

func typed[T any](s cache.Store) []T {
	items := s.List()
	out := make([]T, 0, len(items))
	for _, it := range items {
		if v, ok := it.(T); ok {
			out = append(out, v)
		}
	}
	return out
}
