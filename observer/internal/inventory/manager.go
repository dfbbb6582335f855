// Package inventory mirrors the lok8s ClusterInventory singleton onto the
// heartbeat and writes the platform's addon verdict back to its status.
//
// The CR is polled, not watched: an informer on a CRD that is not installed
// would error-loop, and most clusters never have it. Every failure is soft:
// the beat simply carries no inventory block.
package inventory

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/wire"
)

// GVR is the ClusterInventory resource; it is cluster-scoped.
var GVR = schema.GroupVersionResource{Group: "lok8s.dev", Version: "v1alpha1", Resource: "clusterinventories"}

const (
	// Name is the singleton the lo CLI applies.
	Name = "cluster"
	// FieldManager owns status.availableUpdates and status.lastReported.
	FieldManager = "kubehz-agent"
	// DefaultInterval is used when Options.Interval is not positive.
	DefaultInterval = time.Minute
	// callTimeout bounds each GET and PATCH.
	callTimeout = 15 * time.Second
)

// Manager holds the last read of the CR: the spec snapshot for the beat and
// the status baseline that makes the write-back idempotent. Run, Snapshot and
// Apply may be called from different goroutines.
type Manager struct {
	client   dynamic.ResourceInterface
	clk      clock.Clock
	interval time.Duration
	log      *slog.Logger
	notify   func()

	mu       sync.Mutex
	snapshot *wire.Inventory
	present  bool                   // the CR exists, as of the last read or write
	recorded bool                   // status.availableUpdates exists as a list
	baseline []wire.AvailableUpdate // what status.availableUpdates holds
	// epoch counts write-back outcomes. A read that began before one may
	// carry an older status, so it must not overwrite the newer baseline.
	epoch       uint64
	lastReadErr string

	read atomic.Bool // the first read has ended, whatever it found

	applyMu         sync.Mutex // one write-back at a time; guards the fields below
	lastPatchErr    string
	warnedForbidden bool
	warnedNoStatus  bool // the CRD has no status subresource
}

// Options tune a Manager; every field may be left zero.
type Options struct {
	Interval time.Duration // between reads; zero or less: DefaultInterval
	Log      *slog.Logger  // nil: discard
	// Notify is called, never under a lock, whenever the spec snapshot
	// changes; nil: nobody.
	Notify func()
}

// New builds a Manager; nothing is read until Run.
func New(dyn dynamic.Interface, clk clock.Clock, opts Options) *Manager {
	m := &Manager{client: dyn.Resource(GVR), clk: clk, interval: opts.Interval, log: opts.Log, notify: opts.Notify}
	if m.interval <= 0 {
		m.interval = DefaultInterval
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.notify == nil {
		m.notify = func() {}
	}
	return m
}

// Snapshot returns a copy of the spec as last read, or nil when there is no
// CRD, no CR, no permission or no spec.
func (m *Manager) Snapshot() *wire.Inventory {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snapshot == nil {
		return nil
	}
	inv := *m.snapshot
	inv.Addons = slices.Clone(inv.Addons)
	return &inv
}

// Run reads the CR now and then every interval until ctx is done. A failed
// read never stops the poll: it clears the snapshot or keeps it (store says
// which), and the next read comes an interval later.
func (m *Manager) Run(ctx context.Context) error {
	m.refresh(ctx)
	// The interval is waited after each read, not ticked: a slow read delays
	// the next one instead of queueing it.
	for backoff.Sleep(ctx, m.clk, m.interval) {
		m.refresh(ctx)
	}
	return nil
}

// refresh reads the CR once and stores what it found.
func (m *Manager) refresh(ctx context.Context) {
	m.mu.Lock()
	epoch := m.epoch
	m.mu.Unlock()

	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	obj, err := m.client.Get(callCtx, Name, metav1.GetOptions{})
	cancel()
	if ctx.Err() != nil {
		return // shutting down: a cancelled read says nothing about the CR
	}
	var r reading
	if err == nil {
		r = readingFrom(obj.Object)
	}
	m.store(epoch, r, err)
	m.read.Store(true)
}

// HasSynced reports whether the first read has ended: before that, a beat
// without the inventory would tell the platform there is none.
func (m *Manager) HasSynced() bool { return m.read.Load() }

// reading is what one GET found; the zero value is "no CR".
type reading struct {
	snapshot *wire.Inventory
	present  bool
	recorded bool
	baseline []wire.AvailableUpdate
}

func readingFrom(obj map[string]any) reading {
	recorded, baseline := statusFromObject(obj)
	return reading{snapshot: snapshotFromObject(obj), present: true, recorded: recorded, baseline: baseline}
}

// store records a read begun at epoch, logs a failure once per distinct
// message (NotFound is the normal state of most clusters and stays silent),
// and notifies when the snapshot changed. Only a NotFound (no CR, no CRD)
// or a Forbidden says the CR is gone from the agent's view; any other
// failure (a timeout, a 5xx, a refused connection) says nothing about it,
// so the last read stands rather than the inventory leaving the beat and
// coming back with the next good read.
func (m *Manager) store(epoch uint64, r reading, err error) {
	m.mu.Lock()
	logErr := false
	switch {
	case err == nil || apierrors.IsNotFound(err):
		m.lastReadErr = ""
	case err.Error() != m.lastReadErr:
		m.lastReadErr = err.Error()
		logErr = true
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		m.mu.Unlock()
		if logErr {
			m.log.Warn("Cannot read the ClusterInventory; the beat keeps the last one read", "name", Name, "err", err)
		}
		return
	}
	changed := !equalInventory(m.snapshot, r.snapshot)
	m.snapshot = r.snapshot
	if epoch == m.epoch {
		m.present, m.recorded, m.baseline = r.present, r.recorded, r.baseline
	}
	m.mu.Unlock()

	if logErr {
		m.log.Warn("Cannot read the ClusterInventory; the beat carries no inventory", "name", Name, "err", err)
	}
	if changed {
		m.notify()
	}
}
