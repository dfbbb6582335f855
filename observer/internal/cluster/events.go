package cluster

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
)

// MaxEventRecords bounds the Warning event records a store keeps, the MD
// namespace's Machine events aside. Anyone the default edit role binds may
// create Events, as many as they like, at up to 0.9 KB a record (1.7 KB
// with notes kept, both measured with every field at its cap). The beat
// sends the 20 newest, and a store that drops only the oldest and keeps
// more than 20 always holds those: 2,000 keep a busy cluster's recent
// warnings in under 4 MiB.
const MaxEventRecords = 2000

// eventStore is the Warning events' reflector store. Past its bound it
// drops the records seen longest ago, down to nine tenths of it, so a
// flood costs one sort per thousand new events rather than one per event;
// the newest, which the beat sends, stay. The Machine events of the MD
// namespace are kept whatever their number: machine issues read them, and
// only machine-controller and the cluster's admins write there.
type eventStore struct {
	opts      EventOptions // Now is read from now for each event
	now       func() time.Time
	transform cache.TransformFunc
	limit     int
	signal    func()
	synced    atomic.Bool

	mu      sync.RWMutex
	records map[string]*Event
	bounded int // records the limit applies to
}

func newEventStore(opts EventOptions, now func() time.Time, limit int, signal func()) *eventStore {
	s := &eventStore{opts: opts, now: now, limit: limit, signal: signal, records: map[string]*Event{}}
	s.transform = informer.Transform("event", func(e *kubeapi.Event) *Event {
		o := s.opts
		o.Now = s.now()
		return EventFrom(e, o)
	})
	return s
}

var _ cache.TransformingStore = (*eventStore)(nil)

// Transformer compacts each event, in the reflector's temporary store too.
func (s *eventStore) Transformer() cache.TransformFunc { return s.transform }

// kept says the bound never drops r.
func (s *eventStore) kept(r *Event) bool { return r.InvolvedName != "" }

func (s *eventStore) Add(obj any) error {
	return putRecord(&s.mu, s.transform, obj, s.putLocked, s.signal)
}
func (s *eventStore) Update(obj any) error { return s.Add(obj) }

func (s *eventStore) putLocked(rec *Event) bool {
	key := rec.Namespace + "/" + rec.Name
	old, had := s.records[key]
	if had && old.same(rec) {
		// A recorder bumps an event's count and time on every repeat; only a
		// change the beat would show is news.
		return false
	}
	if had && !s.kept(old) {
		s.bounded--
	}
	s.records[key] = rec
	if !s.kept(rec) {
		s.bounded++
	}
	if s.bounded > s.limit {
		s.trimLocked()
	}
	return true
}

// trimLocked drops the records seen longest ago, keys breaking ties so the
// choice does not depend on map order, down to nine tenths of the limit.
func (s *eventStore) trimLocked() {
	type aged struct {
		key  string
		seen time.Time
	}
	var all []aged
	for k, r := range s.records {
		if !s.kept(r) {
			all = append(all, aged{k, r.LastSeen})
		}
	}
	slices.SortFunc(all, func(a, b aged) int {
		if c := a.seen.Compare(b.seen); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	for _, a := range all[:len(all)-s.limit*9/10] {
		delete(s.records, a.key)
		s.bounded--
	}
}

func (s *eventStore) Delete(obj any) error {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old, had := s.records[key]
	if had {
		delete(s.records, key)
		if !s.kept(old) {
			s.bounded--
		}
	}
	s.mu.Unlock()
	if had {
		s.signal()
	}
	return nil
}

// Replace swaps in a whole list: the initial sync, and every relist.
func (s *eventStore) Replace(items []any, _ string) error {
	next := newEventStore(s.opts, s.now, s.limit, func() {})
	next.records = make(map[string]*Event, min(len(items), s.limit))
	for _, obj := range items {
		if err := next.Add(obj); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.records, s.bounded = next.records, next.bounded
	s.mu.Unlock()
	s.synced.Store(true)
	s.signal()
	return nil
}

func (s *eventStore) Resync() error { return nil }

// List returns the records; callers must not modify them.
func (s *eventStore) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r)
	}
	return out
}

func (s *eventStore) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Keys(s.records))
}

func (s *eventStore) Get(obj any) (any, bool, error) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(key)
}

func (s *eventStore) GetByKey(key string) (any, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.records[key]
	return r, ok, nil
}

// len is how many records the store holds.
func (s *eventStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.records)
}
