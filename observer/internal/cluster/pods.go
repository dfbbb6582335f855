package cluster

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// Phase is a pod's phase in one byte.
type Phase uint8

// The phases the beat counts; anything else, empty included, is unknown.
const (
	PhaseUnknown Phase = iota
	PhasePending
	PhaseRunning
	PhaseSucceeded
	PhaseFailed
)

// PhaseOf maps the API's phase string.
func PhaseOf(p string) Phase {
	switch p {
	case kubeapi.PodPending:
		return PhasePending
	case kubeapi.PodRunning:
		return PhaseRunning
	case kubeapi.PodSucceeded:
		return PhaseSucceeded
	case kubeapi.PodFailed:
		return PhaseFailed
	}
	return PhaseUnknown
}

// Pod is what the heartbeat reads from a Pod: its namespace and phase. Key
// is "namespace/name", the informer's key, so the namespace costs no string
// of its own.
type Pod struct {
	Key   string
	Phase Phase
}

// Namespace is the namespace part of the key.
func (p *Pod) Namespace() string {
	ns, _, _ := strings.Cut(p.Key, "/")
	return ns
}

// GetObjectMeta implements metav1.ObjectMetaAccessor for client-go's keying
// (the reflector's temporary store during a streamed initial list).
func (p *Pod) GetObjectMeta() metav1.Object {
	ns, name, _ := strings.Cut(p.Key, "/")
	return &metav1.ObjectMeta{Namespace: ns, Name: name}
}

var podTransform = informer.Transform("pod", func(p *kubeapi.PodPhase) *Pod {
	return &Pod{Key: p.Namespace + "/" + p.Name, Phase: PhaseOf(p.Status.Phase)}
})

// podStore is the pod reflector's store. The beat reads only counts, so a
// pod is kept as a 96-bit hash of its key and one word holding its
// namespace's slot and its phase: 16 bytes in one map, no string and no
// object per pod. BenchmarkPodStore prints what that costs against a map
// holding the keys themselves and against client-go's store of compact
// records; at 150,000 pods the pods are nearly all of the heap. Two pods
// whose keys share a hash would count as one: under two independent
// seeded hashes that is about a 1 in 10^19 chance at 150,000 pods, not a
// case the counts can meet.
//
// The counts by phase and by namespace are kept as pods come and go, so a
// beat reads them without walking the pods. A namespace's slot is freed
// with its last pod: clusters that churn namespaces do not grow the table.
//
// It is a cache.TransformingStore: the reflector writes to it, and compacts
// a streamed initial list as it arrives instead of holding it whole until
// it ends. Nothing reads it but Summary and len.
type podStore struct {
	signal func()
	synced atomic.Bool
	seeds  [2]maphash.Seed

	mu     sync.RWMutex
	counts podCounts
}

// podKey is a pod's "namespace/name" hashed under the store's two seeds;
// three words rather than two uint64s, so that key and entry fill 16 bytes
// without padding.
type podKey [3]uint32

// podEntry is what the store keeps of one pod: its namespace's slot in the
// high bits and its phase in the low three.
type podEntry uint32

const phaseBits = 3

func entry(slot uint32, phase Phase) podEntry { return podEntry(slot<<phaseBits | uint32(phase)) }
func (e podEntry) slot() uint32               { return uint32(e) >> phaseBits }
func (e podEntry) phase() Phase               { return Phase(e & (1<<phaseBits - 1)) }

// podCounts is the pods and what the beat reads of them.
type podCounts struct {
	pods     map[podKey]podEntry
	byPhase  [PhaseFailed + 1]int
	slots    map[string]uint32 // namespace → its slot
	nsNames  []string          // slot → namespace, "" while free
	nsCounts []int             // slot → pods in it
	free     []uint32          // slots whose namespace has no pod left
}

func newPodCounts(size int) podCounts {
	return podCounts{pods: make(map[podKey]podEntry, size), slots: map[string]uint32{}}
}

// put records a pod's phase and reports whether that changed anything.
func (c *podCounts) put(key podKey, namespace string, phase Phase) bool {
	old, had := c.pods[key]
	if had {
		if old.phase() == phase {
			return false
		}
		c.byPhase[old.phase()]--
		c.byPhase[phase]++
		c.pods[key] = entry(old.slot(), phase)
		return true
	}
	slot, ok := c.slots[namespace]
	if !ok {
		if n := len(c.free); n > 0 {
			slot, c.free = c.free[n-1], c.free[:n-1]
			c.nsNames[slot] = namespace
		} else {
			slot = uint32(len(c.nsNames))
			c.nsNames = append(c.nsNames, namespace)
			c.nsCounts = append(c.nsCounts, 0)
		}
		c.slots[namespace] = slot
	}
	c.nsCounts[slot]++
	c.byPhase[phase]++
	c.pods[key] = entry(slot, phase)
	return true
}

// remove forgets a pod and reports whether it was there.
func (c *podCounts) remove(key podKey) bool {
	e, had := c.pods[key]
	if !had {
		return false
	}
	delete(c.pods, key)
	c.byPhase[e.phase()]--
	slot := e.slot()
	if c.nsCounts[slot]--; c.nsCounts[slot] == 0 {
		delete(c.slots, c.nsNames[slot])
		c.nsNames[slot] = ""
		c.free = append(c.free, slot)
	}
	return true
}

func newPodStore(signal func()) *podStore {
	return &podStore{signal: signal, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		counts: newPodCounts(0)}
}

var _ cache.TransformingStore = (*podStore)(nil)

// Transformer is what the reflector applies to its temporary store.
func (s *podStore) Transformer() cache.TransformFunc { return podTransform }

func (s *podStore) hash(key string) podKey {
	a, b := maphash.String(s.seeds[0], key), maphash.String(s.seeds[1], key)
	return podKey{uint32(a), uint32(a >> 32), uint32(b)}
}

func (s *podStore) Add(obj any) error {
	return putRecord(&s.mu, podTransform, obj, s.putLocked, s.signal)
}
func (s *podStore) Update(obj any) error { return s.Add(obj) }

func (s *podStore) putLocked(rec *Pod) bool {
	return s.counts.put(s.hash(rec.Key), rec.Namespace(), rec.Phase)
}

func (s *podStore) Delete(obj any) error {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return err
	}
	h := s.hash(key)
	s.mu.Lock()
	had := s.counts.remove(h)
	s.mu.Unlock()
	if had {
		s.signal()
	}
	return nil
}

// Replace swaps in a whole list: the initial sync, and every relist.
func (s *podStore) Replace(items []any, _ string) error {
	next := newPodCounts(len(items))
	for _, obj := range items {
		rec, err := s.record(obj)
		if err != nil {
			return err
		}
		next.put(s.hash(rec.Key), rec.Namespace(), rec.Phase)
	}
	s.mu.Lock()
	s.counts = next
	s.mu.Unlock()
	s.synced.Store(true)
	s.signal()
	return nil
}

func (s *podStore) record(obj any) (*Pod, error) { return recordOf[*Pod](podTransform, obj) }

func (s *podStore) Resync() error { return nil }

// len is how many pods the store holds.
func (s *podStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.counts.pods)
}

// Summary counts the pods by phase and, when byNamespace, by namespace.
func (s *podStore) Summary(byNamespace bool) wire.Pods {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := &s.counts
	out := wire.Pods{
		Total:     len(c.pods),
		Running:   c.byPhase[PhaseRunning],
		Pending:   c.byPhase[PhasePending],
		Failed:    c.byPhase[PhaseFailed],
		Succeeded: c.byPhase[PhaseSucceeded],
		Unknown:   c.byPhase[PhaseUnknown],
	}
	if byNamespace && len(c.slots) > 0 {
		out.ByNamespace = make(map[string]int, len(c.slots))
		for ns, slot := range c.slots {
			out.ByNamespace[ns] = c.nsCounts[slot]
		}
	}
	return out
}
