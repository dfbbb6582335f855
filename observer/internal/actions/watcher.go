package actions

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// Watcher caches the report ConfigMap and the actor's Lease, each as a
// compact record, and signals notify whenever what the beat would carry
// changes, including the moment the Lease lapses with nothing else
// happening.
type Watcher struct {
	namespace   string
	names       Names
	clk         clock.Clock
	log         *slog.Logger
	notify      func()
	reports     cache.Store
	leases      cache.Store
	controllers []cache.Controller
	rearm       chan struct{} // the expiry changed: reset the timer

	mu       sync.Mutex
	last     []wire.Action          // what the last evaluation folded
	expiry   time.Time              // when the live Lease lapses; zero when not live
	live     bool                   // for logging transitions only
	problems map[report.Reason]bool // the current document's, already logged
	mismatch holders                // last logged; zero when none
}

// holders is a report holder and a Lease holder that disagree.
type holders struct{ report, lease string }

// Source reads the agent's namespace.
type Source struct {
	ConfigMaps kubeapi.Reader[*kubeapi.ConfigMapList]
	Leases     kubeapi.Reader[*kubeapi.LeaseList]
}

// Names are the report ConfigMap's and the Lease's, as configured.
type Names struct{ ConfigMap, Lease string }

// Options tune a Watcher; every field may be left zero.
type Options struct {
	Log    *slog.Logger // nil: discard
	Notify func()       // called on every change of what Actions would return; nil: nobody
}

// New watches the two named objects through src, which reads namespace;
// nothing talks to the apiserver until Run.
func New(src Source, namespace string, names Names, clk clock.Clock, opts Options) *Watcher {
	log, notify := opts.Log, opts.Notify
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{
		namespace: namespace, names: names, clk: clk, notify: notify, rearm: make(chan struct{}, 1),
		log: log.With("configMap", namespace+"/"+names.ConfigMap, "lease", namespace+"/"+names.Lease),
	}
	w.reports = w.informer(&kubeapi.ConfigMap{}, reportTransform(names.ConfigMap),
		kubeapi.ListWatch(src.ConfigMaps, kubeapi.Named(names.ConfigMap)))
	w.leases = w.informer(&kubeapi.Lease{}, leaseTransform,
		kubeapi.ListWatch(src.Leases, kubeapi.Named(names.Lease)))
	return w
}

func (w *Watcher) informer(example runtime.Object, t cache.TransformFunc, lw cache.ListerWatcher) cache.Store {
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    example,
		Transform:     t,
		// Handlers only re-evaluate; a resync would only re-evaluate the same.
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.reevaluate() },
			UpdateFunc: func(any, any) { w.reevaluate() },
			DeleteFunc: func(any) { w.reevaluate() },
		},
	})
	w.controllers = append(w.controllers, ctrl)
	return store
}

// Run watches until ctx is done and returns nil once every goroutine it
// started has ended. Call it once.
func (w *Watcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, c := range w.controllers {
		wg.Go(func() { c.RunWithContext(ctx) })
	}
	wg.Go(func() { w.expire(ctx) })
	wg.Wait()
	return nil
}

// HasSynced reports whether both objects have been listed once. Before that
// Actions returns nil, so a caller that beats before sync sends a "clear".
func (w *Watcher) HasSynced() bool {
	for _, c := range w.controllers {
		if !c.HasSynced() {
			return false
		}
	}
	return true
}

// Actions is what the beat at now carries: the report's validated actions
// while the Lease has a holder renewed within its duration, else nil. Also
// nil when there are none, so the key is omitted. The slice is the caller's.
func (w *Watcher) Actions(now time.Time) []wire.Action {
	doc, _ := w.report()
	return Fold(doc, w.lease(), now)
}

// Holder is the Lease's holder as cached, "" when none, and whether the
// Lease is live at now.
func (w *Watcher) Holder(now time.Time) (holder string, live bool) {
	l := w.lease()
	if l == nil {
		return "", false
	}
	return l.Holder, l.Live(now)
}

func (w *Watcher) report() (report.Document, []report.Problem) {
	obj, ok, _ := w.reports.GetByKey(w.namespace + "/" + w.names.ConfigMap)
	if r, isRecord := obj.(*reportRecord); ok && isRecord {
		return r.doc, r.problems
	}
	return report.Document{}, nil
}

func (w *Watcher) lease() *Lease {
	obj, ok, _ := w.leases.GetByKey(w.namespace + "/" + w.names.Lease)
	if r, isRecord := obj.(*leaseRecord); ok && isRecord {
		l := r.lease
		return &l
	}
	return nil
}

// expire keeps one timer at the live Lease's expiry, so the beat after the
// actor dies drops its actions even when neither object changes again.
func (w *Watcher) expire(ctx context.Context) {
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		w.mu.Lock()
		expiry := w.expiry
		w.mu.Unlock()
		var fire <-chan time.Time
		if !expiry.IsZero() {
			wait := expiry.Sub(w.clk.Now())
			if wait <= 0 {
				w.reevaluate() // lapsed already: it clears the expiry
				continue
			}
			timer = w.clk.NewTimer(wait)
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.rearm:
		case <-fire:
			w.reevaluate()
		}
	}
}
