// Package health is the observer's view of control-plane health: the
// apiserver and etcd as the apiserver's own readiness checks report them, the
// scheduler and controller-manager from their static pods, and the earliest
// certificate expiry visible without reading any secret.
package health

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/wire"
)

// probeTimeout bounds each readyz request, TLS handshake and CSR probe.
const probeTimeout = 15 * time.Second

// Monitor keeps the latest control-plane components and certificate expiry.
type Monitor struct {
	client   kubernetes.Interface
	readyz   rest.Interface // nil when the client has none (fake clientsets)
	restCfg  *rest.Config
	clk      clock.Clock
	interval time.Duration
	log      *slog.Logger
	notify   func()

	pods        cache.Store
	podsCtrl    cache.Controller
	podsChanged chan struct{}

	mu         sync.Mutex
	lastReadyz *Readyz // nil: the last probe failed, or none ran yet
	components []wire.Component
	serving    time.Time   // zero: unknown
	csrs       cache.Store // nil until the CSR read is known to be allowed
}

// New builds the monitor; nothing talks to the apiserver until Run. notify,
// if not nil, is called whenever Components changes.
func New(client kubernetes.Interface, restCfg *rest.Config, clk clock.Clock, interval time.Duration,
	log *slog.Logger, notify func()) *Monitor {
	m := &Monitor{
		client: client, readyz: client.Discovery().RESTClient(), restCfg: restCfg,
		clk: clk, interval: interval, log: log, notify: notify,
		podsChanged: make(chan struct{}, 1),
	}
	pods := client.CoreV1().Pods(metav1.NamespaceSystem)
	m.pods, m.podsCtrl = informer(client, &corev1.Pod{}, podTransform, &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = controlPlaneSelector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = controlPlaneSelector
			return pods.Watch(ctx, o)
		},
	}, m.podsChanged)
	return m
}

// informer builds one informer whose cache holds compact records and whose
// handlers only signal changed (when not nil).
func informer(client kubernetes.Interface, example runtime.Object, t cache.TransformFunc,
	lw *cache.ListWatch, changed chan struct{}) (cache.Store, cache.Controller) {
	signal := func() {
		if changed == nil {
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	return cache.NewInformerWithOptions(cache.InformerOptions{
		// The wrapper tells the reflector whether client can stream the
		// initial list; a fake clientset cannot.
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, client),
		ObjectType:    example,
		ResyncPeriod:  0, // the watch is the only source of truth
		Transform:     t,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { signal() },
			UpdateFunc: func(any, any) { signal() },
			DeleteFunc: func(any) { signal() },
		},
	})
}

func (m *Monitor) csrInformer() (cache.Store, cache.Controller) {
	csrs := m.client.CertificatesV1().CertificateSigningRequests()
	return informer(m.client, &certificatesv1.CertificateSigningRequest{}, csrTransform, &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return csrs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return csrs.Watch(ctx, o)
		},
	}, nil) // certificate changes wait for the next beat
}

// Components returns the control-plane components, sorted by name; nil when
// nothing is known.
func (m *Monitor) Components() []wire.Component {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.components)
}

// Certificates returns the earliest visible certificate expiry; nil when
// unknown.
func (m *Monitor) Certificates() *wire.Certificates {
	m.mu.Lock()
	serving, store := m.serving, m.csrs
	m.mu.Unlock()
	var csrs []*CSR
	if store != nil {
		for _, it := range store.List() {
			if c, ok := it.(*CSR); ok {
				csrs = append(csrs, c)
			}
		}
	}
	at, ok := Earliest(serving, csrs, m.clk.Now())
	if !ok {
		return nil
	}
	return &wire.Certificates{ExpiresAt: at.UTC().Truncate(time.Second).Format(time.RFC3339)}
}

// publish recomputes the components and notifies when they changed.
func (m *Monitor) publish() {
	m.mu.Lock()
	// The pods are read under the lock too, so two publishes cannot land
	// out of order and leave an older view behind.
	var pods []*Pod
	for _, it := range m.pods.List() {
		if p, ok := it.(*Pod); ok {
			pods = append(pods, p)
		}
	}
	next := ControlPlane(m.lastReadyz, pods)
	changed := !slices.Equal(next, m.components)
	m.components = next
	m.mu.Unlock()
	if changed && m.notify != nil {
		m.notify()
	}
}
