// Package health is the observer's view of control-plane health: the
// apiserver and etcd as the apiserver's own readiness checks report them, the
// scheduler and controller-manager from their static pods, and the earliest
// certificate expiry visible without reading any secret.
package health

import (
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// probeTimeout bounds each readyz request, TLS handshake and CSR probe.
const probeTimeout = 15 * time.Second

// Monitor keeps the latest control-plane components and certificate expiry.
type Monitor struct {
	csrReader kubeapi.Reader[*kubeapi.CertificateSigningRequestList]
	readyz    rest.Interface // nil: no readyz probe (unit tests without a stub)
	restCfg   *rest.Config
	clk       clock.Clock
	interval  time.Duration
	log       *slog.Logger
	notify    func()

	pods         cache.Store
	podsCtrl     cache.Controller
	podsChanged  chan struct{}
	certsChanged chan struct{} // the CSR informer's changes

	mu         sync.Mutex
	lastReadyz *Readyz // nil: the last probe failed, or none ran yet
	components []wire.Component
	serving    servingCerts // none: unknown
	csrs       cache.Store  // nil until the CSR read is known to be allowed
	// certs is the expiry last published, to notify only on a change.
	certs *wire.Certificates
}

// Source is what the monitor reads.
type Source struct {
	Pods kubeapi.Reader[*kubeapi.PodList] // in kube-system
	CSRs kubeapi.Reader[*kubeapi.CertificateSigningRequestList]
	Raw  rest.Interface // for /readyz; nil: no readyz probe
}

// Options tune a Monitor; every field may be left zero.
type Options struct {
	Interval time.Duration // between probes; zero or less: one minute
	Log      *slog.Logger  // nil: discard
	Notify   func()        // called whenever Components or Certificates changes; nil: nobody
}

// New builds the monitor; nothing talks to the apiserver until Run.
func New(src Source, restCfg *rest.Config, clk clock.Clock, opts Options) *Monitor {
	m := &Monitor{
		csrReader: src.CSRs, readyz: src.Raw, restCfg: restCfg,
		clk: clk, interval: opts.Interval, log: opts.Log, notify: opts.Notify,
		podsChanged: make(chan struct{}, 1), certsChanged: make(chan struct{}, 1), serving: servingCerts{},
	}
	if m.interval <= 0 {
		m.interval = time.Minute // a zero timer would spin
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.pods, m.podsCtrl = newInformer(&kubeapi.Pod{}, podTransform,
		kubeapi.ListWatch(src.Pods, kubeapi.Selectors{Label: controlPlaneSelector}), m.podsChanged)
	return m
}

// newInformer builds one informer whose cache holds compact records and whose
// handlers only signal changed (when not nil).
func newInformer(example runtime.Object, t cache.TransformFunc,
	lw cache.ListerWatcher, changed chan struct{}) (cache.Store, cache.Controller) {
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
		ListerWatcher: lw,
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
	return newInformer(&kubeapi.CertificateSigningRequest{}, csrTransform,
		kubeapi.ListWatch(m.csrReader, kubeapi.Selectors{}), m.certsChanged)
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
	defer m.mu.Unlock()
	return m.certificates()
}

// certificates is Certificates with m.mu held.
func (m *Monitor) certificates() *wire.Certificates {
	serving, store := m.serving.earliest(), m.csrs
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

// publishCerts recomputes the certificate expiry and notifies when it
// changed: a new CSR, a rotated serving certificate, a handshake that
// failed, or the earliest certificate expiring. It computes under the lock,
// so two calls cannot store an older value last.
func (m *Monitor) publishCerts() {
	m.mu.Lock()
	next := m.certificates()
	changed := !reflect.DeepEqual(next, m.certs)
	m.certs = next
	m.mu.Unlock()
	if changed && m.notify != nil {
		m.notify()
	}
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
