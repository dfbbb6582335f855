package machines

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// probeTimeout bounds the one-item List that tests readability: the
// contract's 15 seconds per list.
const probeTimeout = 15 * time.Second

// gate runs one informer only while its resource is readable. While the CRD
// is absent or the read is Forbidden it probes with a one-item List every
// interval instead of letting a reflector retry (and log) in a loop; an
// informer whose list or watch later fails that way is stopped, its records
// dropped, and probing resumes.
type gate struct {
	what      string // "Machines": the subject of log lines
	omitted   string // what the beat loses while unreadable
	client    any    // tells the reflector whether WatchList is supported
	resource  dynamic.ResourceInterface
	transform cache.TransformFunc
	clk       clock.Clock
	interval  time.Duration
	log       *slog.Logger
	changed   func() // readability changed: a pass is due

	// logged is the last failure reported, so each distinct reason is logged
	// once rather than every interval. Only run's goroutine touches it.
	logged string

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

// run alternates probing and watching until ctx is done.
func (g *gate) run(ctx context.Context) {
	for g.waitReadable(ctx) {
		err := g.watch(ctx)
		if ctx.Err() != nil {
			return
		}
		g.report(err)
	}
}

// waitReadable probes every interval; false when ctx ended first.
func (g *gate) waitReadable(ctx context.Context) bool {
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err := g.resource.List(pctx, metav1.ListOptions{Limit: 1})
		cancel()
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			g.logged = ""
			g.log.Info(g.what + " readable; watching")
			return true
		}
		g.report(err)
		wait := g.clk.NewTimer(g.interval)
		select {
		case <-ctx.Done():
			wait.Stop()
			return false
		case <-wait.C():
		}
	}
}

// watch runs the informer until ctx is done or a NotFound/Forbidden list or
// watch error stops it, which it returns.
func (g *gate) watch(ctx context.Context) error {
	ictx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	inf := cache.NewSharedIndexInformerWithOptions(g.listWatch(), &unstructured.Unstructured{},
		// Resync 0: the watch is the only source of truth.
		cache.SharedIndexInformerOptions{ObjectDescription: g.what})
	if err := inf.SetTransform(g.transform); err != nil {
		return err
	}
	err := inf.SetWatchErrorHandlerWithContext(func(hctx context.Context, r *cache.Reflector, err error) {
		if gone(err) {
			stop(err) // ends the informer: retrying would only repeat the error
			return
		}
		cache.DefaultWatchErrorHandler(hctx, r, err)
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ictx) })
	select {
	case <-inf.HasSyncedChecker().Done():
		g.setStore(inf.GetStore())
		<-ictx.Done()
	case <-ictx.Done():
	}
	wg.Wait()
	if g.clear() {
		g.changed()
	}
	return context.Cause(ictx)
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
	if reason != metav1.StatusReasonUnknown {
		attrs = append(attrs, "reason", string(reason))
	}
	g.log.Log(context.Background(), level, g.what+" not readable; "+g.omitted, attrs...)
}
