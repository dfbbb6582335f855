// Package store keeps the actor's action reports for the current desired
// revision: one entry per (type, target), in the order first reported. Every
// write says whether it changed what a beat would carry. Publisher
// (publish.go) hands them to the observer through one ConfigMap.
//
// The store keeps every entry it is given until a revision change, a Prune
// or a Clear; the executor prunes each capability to what its pass decided
// about, done reports excepted, so a platform that names new pools at the
// same revision replaces reports instead of piling them up. The wire
// carries at most 20, and the original kept the oldest, so a long
// revision's later heal outcomes were cut. Newest closes that: it hands out
// the entries that changed most recently, still in store order.
package store

import (
	"cmp"
	"slices"
	"sync"

	"kubehz.dev/agent/shared/wire"
)

type key struct{ typ, target string }

// Store is the in-memory action store. It is safe for concurrent use: the
// executor writes while the hand-off reads snapshots.
type Store struct {
	mu       sync.Mutex
	revision int64
	entries  []wire.Action // insertion order
	changed  []uint64      // per entry, the tick of its last change
	index    map[key]int   // position in entries
	tick     uint64
}

// New returns an empty store at revision 0.
func New() *Store {
	return &Store{index: map[key]int{}}
}

// Begin starts a pass for revision rev. A different revision drops every
// entry (the latest revision wins); the same revision keeps them, so a retry
// pass updates in place without flapping. It reports whether anything was
// dropped.
func (s *Store) Begin(rev int64) bool {
	s.mu.Lock()
	changed := false
	if rev != s.revision {
		changed = len(s.entries) > 0
		s.reset()
		s.revision = rev
	}
	s.mu.Unlock()
	return changed
}

// Upsert replaces the entry with the same type and target, or appends a new
// one. It reports a change only when some field actually differs, so a retry
// that reproduces identical outcomes causes no beat.
func (s *Store) Upsert(a wire.Action) bool {
	s.mu.Lock()
	k := key{a.Type, a.Target}
	changed := true
	s.tick++
	if i, ok := s.index[k]; ok {
		changed = s.entries[i] != a
		s.entries[i] = a
		if changed {
			s.changed[i] = s.tick
		}
	} else {
		s.index[k] = len(s.entries)
		s.entries = append(s.entries, a)
		s.changed = append(s.changed, s.tick)
	}
	s.mu.Unlock()
	return changed
}

// Prune removes the entries of type typ whose target is not in keep and whose
// status is not done: done reports stay visible for the revision. Each
// capability's pass uses it to retire the reports of what it no longer
// decides about: a node that recovered by itself, a pool the document
// stopped naming.
//
// Of those done reports it keeps the 20 changed most recently (the wire's
// cap): every heal names a new Machine, so a revision that stands while the
// cluster keeps healing would otherwise grow without end, and a done report
// with 20 newer ones behind it is one Newest never hands out.
func (s *Store) Prune(typ string, keep map[string]bool) bool {
	pruned := s.remove(func(a wire.Action) bool {
		return a.Type == typ && !keep[a.Target] && a.Status != wire.StatusDone
	})
	s.mu.Lock()
	var done []int
	for i, a := range s.entries {
		if a.Type == typ && !keep[a.Target] {
			done = append(done, i)
		}
	}
	var old map[key]bool
	if len(done) > wire.MaxActions {
		slices.SortStableFunc(done, func(a, b int) int { return cmp.Compare(s.changed[b], s.changed[a]) })
		old = map[key]bool{}
		for _, i := range done[wire.MaxActions:] {
			old[key{s.entries[i].Type, s.entries[i].Target}] = true
		}
	}
	s.mu.Unlock()
	if old == nil {
		return pruned
	}
	return s.remove(func(a wire.Action) bool { return old[key{a.Type, a.Target}] }) || pruned
}

// ClearType removes every entry of type typ, done or not, and keeps the
// revision. The executor calls it when a capability is switched off, so that
// capability's reports go even when the revision is unchanged (closing
// docs/contract.md#g-2: the original's begin with the same revision kept them
// forever).
func (s *Store) ClearType(typ string) bool {
	return s.remove(func(a wire.Action) bool { return a.Type == typ })
}

// Clear drops everything and resets the revision to 0. Clearing an empty
// store reports no change.
func (s *Store) Clear() bool {
	s.mu.Lock()
	changed := len(s.entries) > 0
	s.reset()
	s.revision = 0
	s.mu.Unlock()
	return changed
}

// Snapshot returns a copy of the entries in insertion order, or nil when the
// store is empty (so the beat omits the actions key and the platform clears).
func (s *Store) Snapshot() []wire.Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) == 0 {
		return nil
	}
	out := make([]wire.Action, len(s.entries))
	copy(out, s.entries)
	return out
}

// Newest returns at most n of the entries sendable accepts, those changed
// most recently, in store order; nil when there are none. A repeat that
// changed nothing does not make an entry newer. Filtering first means an
// entry the wire would drop never takes the place of one it would carry.
func (s *Store) Newest(n int, sendable func(wire.Action) bool) []wire.Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	order := make([]int, 0, len(s.entries))
	for i, a := range s.entries {
		if sendable(a) {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil
	}
	// Newest first, then the n kept back into store order.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.changed[b], s.changed[a]) })
	kept := order[:min(n, len(order))]
	slices.Sort(kept)
	out := make([]wire.Action, 0, len(kept))
	for _, i := range kept {
		out = append(out, s.entries[i])
	}
	return out
}

// Revision returns the revision of the current pass, 0 after Clear.
func (s *Store) Revision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision
}

// remove drops the entries drop selects, keeping the others in order.
func (s *Store) remove(drop func(wire.Action) bool) bool {
	s.mu.Lock()
	kept, ticks := s.entries[:0], s.changed[:0]
	for i, a := range s.entries {
		if !drop(a) {
			kept = append(kept, a)
			ticks = append(ticks, s.changed[i])
		}
	}
	changed := len(kept) != len(s.entries)
	if changed {
		clear(s.entries[len(kept):])
		s.entries, s.changed = kept, ticks
		s.index = make(map[key]int, len(kept))
		for i, a := range kept {
			s.index[key{a.Type, a.Target}] = i
		}
	}
	s.mu.Unlock()
	return changed
}

// reset empties the entries; the caller holds the lock.
func (s *Store) reset() {
	s.entries, s.changed = nil, nil
	s.index = map[key]int{}
}
