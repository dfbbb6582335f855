// Package owner decides whether this observer is the cluster's heartbeat
// producer. The lok8s CronJob agent and the observer must never both beat:
// each beat is a full snapshot and would erase the other's fields. The
// ConfigMap kubehz-agent-config names the owner in KUBEHZ_HEARTBEAT_OWNER.
package owner

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// MarkerConfigMap and MarkerKey locate the marker; the CronJob's tooling writes them.
const (
	MarkerConfigMap = "kubehz-agent-config"
	MarkerKey       = "KUBEHZ_HEARTBEAT_OWNER"
)

// Owners named by the marker.
const (
	Operator = "operator"
	CronJob  = "cronjob"
)

// Decide is the rule: only an explicit "cronjob" makes the observer stand
// down. A missing ConfigMap or key means no CronJob claims the beat, and an
// unknown value is not a claim either (it is logged by the caller).
func Decide(value string, present bool) (beat bool, known bool) {
	if !present {
		return true, true
	}
	switch strings.ToLower(strings.TrimSpace(value)) {
	case CronJob:
		return false, true
	case Operator, "":
		return true, true
	}
	return true, false
}

// Watcher watches the one ConfigMap. Until its first list it says "beat":
// standing down needs a positive claim.
type Watcher struct {
	lw     cache.ListerWatcher
	log    *slog.Logger
	notify func()

	mu    sync.Mutex
	store cache.Store
	beat  bool
	// unknown is the unknown value last logged: an edit to another key of
	// the ConfigMap re-evaluates, and would otherwise log it again.
	unknown string
}

// Options tune a Watcher; every field may be left zero.
type Options struct {
	Log    *slog.Logger // nil: discard
	Notify func()       // called whenever Beating may have changed; nil: nobody
}

// New watches kubehz-agent-config in the namespace configMaps reads. The RBAC grants get, list and
// watch on that name only, which list and watch satisfy through the
// metadata.name field selector.
func New(configMaps kubeapi.Reader[*kubeapi.ConfigMapList], opts Options) *Watcher {
	lw := kubeapi.ListWatch(configMaps, kubeapi.Named(MarkerConfigMap))
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{lw: lw, log: log, notify: opts.Notify, beat: true}
}

// Run watches until ctx is done.
func (w *Watcher) Run(ctx context.Context) error {
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: w.lw,
		ObjectType:    &kubeapi.ConfigMap{},
		// Only the one value is kept, never the rest of the ConfigMap.
		Transform: func(obj any) (any, error) {
			if cm, ok := obj.(*kubeapi.ConfigMap); ok {
				v, has := cm.Data[MarkerKey]
				return &marker{namespace: cm.Namespace, name: cm.Name, value: v, has: has}, nil
			}
			return obj, nil
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { w.reevaluate() },
			UpdateFunc: func(any, any) { w.reevaluate() },
			DeleteFunc: func(any) { w.reevaluate() },
		},
	})
	w.mu.Lock()
	w.store = store
	w.mu.Unlock()
	ctrl.RunWithContext(ctx)
	return nil
}

// Beating reports whether the observer owns the heartbeat right now.
func (w *Watcher) Beating() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.beat
}

func (w *Watcher) reevaluate() {
	w.mu.Lock()
	var value string
	var present bool
	for _, obj := range w.store.List() {
		if m, ok := obj.(*marker); ok && m.has {
			value, present = m.value, true
		}
	}
	beat, known := Decide(value, present)
	changed := beat != w.beat
	w.beat = beat
	logUnknown := false
	if known {
		w.unknown = "" // an unknown value that comes back is news again
	} else {
		logUnknown = value != w.unknown
		w.unknown = value
	}
	w.mu.Unlock()

	if logUnknown {
		w.log.Warn("Unknown heartbeat owner; the observer keeps beating", "configMap", MarkerConfigMap, "key", MarkerKey,
			"value", wire.Clamp(value, wire.MaxLabelLen))
	}
	if !changed {
		return
	}
	if beat {
		w.log.Info("Heartbeat owner is the operator; beating", "configMap", MarkerConfigMap)
	} else {
		w.log.Info("Heartbeat owner is the CronJob; standing down, caches stay warm", "configMap", MarkerConfigMap, "key", MarkerKey)
	}
	if w.notify != nil {
		w.notify()
	}
}

// marker is the compact cache record: the ConfigMap's key and one value.
type marker struct {
	namespace, name, value string
	has                    bool
}

func (m *marker) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: m.namespace, Name: m.name}
}
