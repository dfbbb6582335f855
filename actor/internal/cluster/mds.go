// Package mds caches the MachineDeployments the scaling decisions read, as
// compact records, and only while a capability that needs them is on: with
// every capability off the actor makes no request to the machine-controller
// APIs at all.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// GVR is machine-controller's MachineDeployment; the group is the legacy
// cluster.k8s.io, not cluster.x-k8s.io.
var GVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}

// defaultSyncTimeout bounds the wait for a first list, so a missing CRD or
// RBAC turns into a reported failure instead of a stuck pass.
const defaultSyncTimeout = 30 * time.Second

// Record is what the decisions read from one MachineDeployment.
type Record struct {
	Namespace, Name, ResourceVersion string
	UID                              types.UID
	Replicas                         *int64
	Labels, Annotations              map[string]string
	// The three template label maps the control-plane heuristic reads.
	TemplateLabels, TemplateSpecMetaLabels, TemplateSpecLabels map[string]string
}

// GetObjectMeta implements metav1.ObjectMetaAccessor for the informer's key.
func (r *Record) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}
}

// Cache runs an informer on demand.
type Cache struct {
	dyn       dynamic.Interface
	namespace string
	log       *slog.Logger
	// syncTimeout is defaultSyncTimeout. It is a field, not the constant, so
	// a test can see a refused list fail in 200 ms instead of 30 s without
	// any package-level state to race on.
	syncTimeout time.Duration

	mu     sync.Mutex
	store  cache.Store
	ctrl   cache.Controller
	cancel context.CancelFunc
	done   chan struct{}
}

// New builds a stopped cache.
func New(dyn dynamic.Interface, namespace string, log *slog.Logger) *Cache {
	return &Cache{dyn: dyn, namespace: namespace, log: log, syncTimeout: defaultSyncTimeout}
}

// Ensure starts the informer if needed and waits for its first list. base
// bounds the informer's life; ctx bounds only this wait.
func (c *Cache) Ensure(base, ctx context.Context) error {
	c.mu.Lock()
	if c.ctrl == nil {
		c.start(base)
	}
	ctrl := c.ctrl
	c.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, c.syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wait.Done(), ctrl.HasSynced) {
		return fmt.Errorf("MachineDeployments in %s not listed within %s (CRD or RBAC missing?)", c.namespace, c.syncTimeout)
	}
	return nil
}

func (c *Cache) start(base context.Context) {
	ri := c.dyn.Resource(GVR).Namespace(c.namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}
	c.store, c.ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
		// The wrapper lets a client that cannot stream a watch list (the
		// fake dynamic client of the unit tests) fall back to list and
		// watch; the real client streams as before.
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, c.dyn),
		ObjectType:    &unstructured.Unstructured{},
		Transform:     transform,
		Handler:       cache.ResourceEventHandlerFuncs{},
	})
	ctx, cancel := context.WithCancel(base)
	c.cancel, c.done = cancel, make(chan struct{})
	go func(ctrl cache.Controller, done chan struct{}) {
		defer close(done)
		ctrl.RunWithContext(ctx)
	}(c.ctrl, c.done)
	c.log.Info("Watching MachineDeployments", "namespace", c.namespace)
}

// Stop ends the informer and forgets its records; Ensure starts it again.
func (c *Cache) Stop() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.ctrl, c.store, c.cancel, c.done = nil, nil, nil, nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
		c.log.Info("Stopped watching MachineDeployments: no capability needs them")
	}
}

// List returns the records by name; nil when the cache is stopped.
func (c *Cache) List() map[string]*Record {
	c.mu.Lock()
	store := c.store
	c.mu.Unlock()
	if store == nil {
		return nil
	}
	out := map[string]*Record{}
	for _, obj := range store.List() {
		if r, ok := obj.(*Record); ok {
			out[r.Name] = r
		}
	}
	return out
}

// Get reads one MachineDeployment straight from the apiserver, a consistent
// read: final decisions that write nothing ("no MachineDeployment",
// "already at N") are confirmed against it, because the cache may lag.
// A missing MachineDeployment is (nil, nil).
func (c *Cache) Get(ctx context.Context, name string) (*Record, error) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	u, err := c.dyn.Resource(GVR).Namespace(c.namespace).Get(rctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get MachineDeployment %s/%s: %w", c.namespace, name, err)
	}
	return recordFrom(u), nil
}

var errShape = errors.New("not a MachineDeployment object")

func transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *Record:
		return o, nil
	case cache.DeletedFinalStateUnknown:
		if o.Obj == nil {
			return o, nil
		}
		inner, err := transform(o.Obj)
		if err != nil {
			return nil, err
		}
		return cache.DeletedFinalStateUnknown{Key: o.Key, Obj: inner}, nil
	case *unstructured.Unstructured:
		return recordFrom(o), nil
	}
	return nil, errShape
}

func recordFrom(u *unstructured.Unstructured) *Record {
	r := &Record{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
	}
	// spec.replicas is read tolerantly: JSON numbers may arrive as int64 or
	// float64; anything else counts as unknown.
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); ok {
		switch n := v.(type) {
		case int64:
			r.Replicas = &n
		case float64:
			i := int64(n)
			r.Replicas = &i
		}
	}
	r.TemplateLabels = labelKeys(u.Object, "spec", "template", "metadata", "labels")
	r.TemplateSpecMetaLabels = labelKeys(u.Object, "spec", "template", "spec", "metadata", "labels")
	r.TemplateSpecLabels = labelKeys(u.Object, "spec", "template", "spec", "labels")
	return r
}

// labelKeys reads a label map keeping every key even when a value is not a
// string: the control-plane check looks at keys, and a map that fails to
// read as strings must not hide a control-plane key (fail closed).
func labelKeys(obj map[string]any, path ...string) map[string]string {
	m, ok, _ := unstructured.NestedMap(obj, path...)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}
