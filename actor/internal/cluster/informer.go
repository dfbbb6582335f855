// Package cluster caches what the actor's decisions read: the
// MachineDeployments and Machines of the MD namespace and the cluster's
// Nodes. Each informer keeps compact records, not whole objects, and runs
// only while a capability that needs it is authorized: with every capability
// off the actor makes no request to the machine-controller APIs at all.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/memlimit"
)

// syncTimeout bounds the wait for a first list, so a missing CRD or
// RBAC turns into an error for the pass (a report for scaling and upgrades,
// a logged skip for healing) instead of a stuck pass.
const syncTimeout = 30 * time.Second

// logger is log, or one that discards when log is nil.
func logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// onDemand is one informer of From objects that runs only while a
// capability needs it. Its cache holds the compact R records compact makes,
// never whole objects. MachineDeployments, Machines and Nodes are each one.
type onDemand[From runtime.Object, R any] struct {
	kind    string // "MachineDeployment", for the transform's errors
	what    string // "MachineDeployments in kube-system", for logs and errors
	list    func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch   func(context.Context, metav1.ListOptions) (watch.Interface, error)
	object  From // the empty object the informer decodes into
	compact func(From) R
	// watchList lets the informer stream its first list when the client
	// can; nil falls back to list and watch.
	watchList any
	// served, when set, asks discovery before the informer starts, so a
	// missing CRD costs one GET per pass instead of a reflector listing it
	// (and being answered 404) in a loop for as long as the job stays
	// authorized.
	served func(context.Context) error
	log    *slog.Logger

	mu     sync.Mutex
	store  cache.Store
	ctrl   cache.Controller
	cancel context.CancelFunc
	done   chan struct{}
}

// Ensure starts the informer if needed and waits for its first list. base
// bounds the informer's life; ctx bounds only this wait.
func (c *onDemand[From, R]) Ensure(base, ctx context.Context) error {
	c.mu.Lock()
	running := c.ctrl != nil
	c.mu.Unlock()
	if !running && c.served != nil {
		sctx, cancel := context.WithTimeout(ctx, syncTimeout)
		err := c.served(sctx)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	c.mu.Lock()
	started := c.ctrl == nil
	if started {
		c.start(base)
	}
	ctrl := c.ctrl
	c.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wait.Done(), ctrl.HasSynced) {
		return fmt.Errorf("%s not listed within %s (CRD or RBAC missing?)", c.what, syncTimeout)
	}
	if started {
		memlimit.ReleaseAfterList()
	}
	return nil
}

func (c *onDemand[From, R]) start(base context.Context) {
	var lw cache.ListerWatcher = &cache.ListWatch{ListWithContextFunc: c.list, WatchFuncWithContext: c.watch}
	if c.watchList != nil {
		lw = cache.ToListWatcherWithWatchListSemantics(lw.(*cache.ListWatch), c.watchList)
	}
	c.store, c.ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    c.object,
		Transform:     c.transform(),
		Handler:       cache.ResourceEventHandlerFuncs{},
	})
	ctx, cancel := context.WithCancel(base)
	c.cancel, c.done = cancel, make(chan struct{})
	go func(ctrl cache.Controller, done chan struct{}) {
		defer close(done)
		ctrl.RunWithContext(ctx)
	}(c.ctrl, c.done)
	c.log.Info("Watching " + c.what)
}

// transform compacts each object on its way into the cache.
func (c *onDemand[From, R]) transform() cache.TransformFunc {
	return informer.Transform(strings.ToLower(c.kind), c.compact)
}

// Stop ends the informer and forgets its records; Ensure starts it again.
func (c *onDemand[From, R]) Stop() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.ctrl, c.store, c.cancel, c.done = nil, nil, nil, nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
		c.log.Info("Stopped watching " + c.what + ": no capability needs them")
	}
}

// cached returns the cached records; nil when the informer is stopped.
func (c *onDemand[From, R]) cached() []R {
	c.mu.Lock()
	store := c.store
	c.mu.Unlock()
	if store == nil {
		return nil
	}
	return informer.Records[R](store.List())
}
