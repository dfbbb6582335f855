package machines

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/backoff"
)

// probeTimeout bounds the discovery request that tests presence: the
// contract's 15 seconds per request.
const probeTimeout = 15 * time.Second

// gate runs one informer only while its resource is readable. While the CRD
// is absent it asks discovery every interval, never listing the resource;
// an informer whose list or watch fails with NotFound or Forbidden is
// stopped, its records dropped, and after an interval discovery is asked
// again. A NotFound after the informer had synced is first checked on the
// short recheck schedule, keeping the records meanwhile. Nothing retries in
// a loop, and nothing is logged twice.
type gate struct {
	what      string // "Machines": the subject of log lines
	omitted   string // what the beat loses while unreadable
	forbidden string // what an operator checks when RBAC refuses
	client    any    // tells the reflector whether WatchList is supported
	// served is kubeapi.Served, bound to resource.
	served    func(context.Context) error
	resource  dynamic.ResourceInterface
	transform cache.TransformFunc
	clk       clock.Clock
	interval  time.Duration
	log       *slog.Logger
	changed   func() // readability changed: a pass is due

	// logged is the last failure reported, so each distinct reason is logged
	// once rather than every interval. Only run's goroutine touches it.
	logged string

	// settled is set once the gate first knows what it has: an informer
	// synced, or the resource found unreadable.
	settled atomic.Bool

	mu    sync.Mutex
	store cache.Store // nil until synced and while unreadable
}

// records returns the cached records, and false while the resource is not
// readable (or not yet synced).
func (g *gate) records() ([]any, bool) {
	g.mu.Lock()
	s := g.store
	g.mu.Unlock()
	if s == nil {
		return nil, false
	}
	return s.List(), true
}

func (g *gate) setStore(s cache.Store) {
	g.mu.Lock()
	g.store = s
	g.mu.Unlock()
	g.changed()
}

// recheck is when discovery is asked again after a readable resource went
// NotFound. An apiserver that has just restarted answers before it serves
// its CRDs again; dropping the records for a whole interval would have the
// beat report the pools gone and then back. So the records are kept until
// one of these asks finds the resource served again, or every one finds it
// absent (31 seconds in all), and only then dropped.
var recheck = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}

// run alternates asking discovery and watching until ctx is done. A watch
// that failed (Forbidden, or the CRD deleted) waits an interval before the
// next attempt, as an absent resource does.
func (g *gate) run(ctx context.Context) {
	err := g.probe(ctx)
	for ctx.Err() == nil {
		if err == nil {
			var lost bool
			lost, err = g.watch(ctx)
			if lost && g.back(ctx) {
				err = nil // served again: watch at once, records kept meanwhile
				continue
			}
			if ctx.Err() != nil {
				return
			}
		}
		// The first failure is news too: a pass then tells the beat that
		// nothing is readable, rather than a beat waiting for one.
		if g.clear() || !g.settled.Swap(true) {
			g.changed()
		}
		g.report(err)
		if !backoff.Sleep(ctx, g.clk, g.interval) {
			return
		}
		err = g.probe(ctx)
	}
}

// probe asks discovery whether the resource is served.
func (g *gate) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return g.served(pctx)
}

func recheckTotal() time.Duration {
	var total time.Duration
	for _, d := range recheck {
		total += d
	}
	return total
}

// back asks discovery on the recheck schedule after a readable resource
// went NotFound, and reports whether it is served again.
func (g *gate) back(ctx context.Context) bool {
	g.log.Info(g.what+" not found after being readable; keeping them while discovery is asked again",
		"for", recheckTotal().String())
	for _, d := range recheck {
		if !backoff.Sleep(ctx, g.clk, d) {
			return false
		}
		if g.probe(ctx) == nil {
			return true
		}
	}
	return false
}

// watch runs the informer until ctx is done or a NotFound/Forbidden list or
// watch error stops it, which it returns. Its records stay in the gate for
// run to keep or drop; lost is a NotFound after the informer had synced,
// the one end run may keep them through.
func (g *gate) watch(ctx context.Context) (lost bool, err error) {
	ictx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	inf := cache.NewSharedIndexInformerWithOptions(g.listWatch(), &unstructured.Unstructured{},
		// Resync 0: the watch is the only source of truth.
		cache.SharedIndexInformerOptions{ObjectDescription: g.what})
	if err := inf.SetTransform(g.transform); err != nil {
		return false, err
	}
	err = inf.SetWatchErrorHandlerWithContext(func(hctx context.Context, r *cache.Reflector, err error) {
		if gone(err) {
			stop(err) // ends the informer: retrying would only repeat the error
			return
		}
		cache.DefaultWatchErrorHandler(hctx, r, err)
	})
	if err != nil {
		return false, err
	}
	synced := false
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ictx) })
	select {
	case <-inf.HasSyncedChecker().Done():
		synced = true
		g.logged = "" // readable: the next failure is news again
		g.log.Info(g.what + " readable; watching")
		g.settled.Store(true)
		g.setStore(inf.GetStore())
		<-ictx.Done()
	case <-ictx.Done():
	}
	wg.Wait()
	err = context.Cause(ictx)
	return synced && ctx.Err() == nil && apierrors.IsNotFound(err), err
}

func (g *gate) clear() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	had := g.store != nil
	g.store = nil
	return had
}

func (g *gate) listWatch() cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return g.resource.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return g.resource.Watch(ctx, o)
		},
	}, g.client)
}

// gone reports the errors that mean "not readable here": no CRD, or no RBAC.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err)
}

// report logs a failure once per distinct reason: the API status reason
// when there is one, else the error text.
func (g *gate) report(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	reason := apierrors.ReasonForError(err)
	key := string(reason)
	if reason == metav1.StatusReasonUnknown {
		key = err.Error()
	}
	if key == g.logged {
		return
	}
	g.logged = key
	level := slog.LevelWarn
	if apierrors.IsNotFound(err) {
		level = slog.LevelInfo // no machine-controller here: normal, not a fault
	}
	attrs := []any{"err", err}
	if apierrors.IsForbidden(err) {
		attrs = append(attrs, "check", g.forbidden)
	}
	if reason != metav1.StatusReasonUnknown {
		attrs = append(attrs, "reason", string(reason))
	}
	g.log.Log(context.Background(), level, g.what+" not readable; "+g.omitted, attrs...)
}
