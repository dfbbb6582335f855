// Package store keeps the actor's action reports for the current desired
// revision: one entry per (type, target), in the order first reported, and a
// notification whenever what a beat would carry changes.
//
// The store keeps every entry it is given. Capping happens on the wire, not
// here: the cap pass sends the first 20 entries with a target, in store order
// (scale, then upgrade, then heal, as the executor runs them). Within a long
// revision the oldest entries therefore win a place on the wire, and later
// heal outcomes can be cut (CONTRACT §13 G-3). Keeping the full list here
// means a smarter cap can be chosen at the wire without losing anything.
package store

import (
	"sync"

	"kubehz.dev/agent/shared/wire"
)

type key struct{ typ, target string }

// Store is the in-memory action store. It is safe for concurrent use: the
// executor writes while the hand-off reads snapshots.
type Store struct {
	onChange func()

	mu       sync.Mutex
	revision int64
	entries  []wire.Action // insertion order
	index    map[key]int   // position in entries
}

// New returns an empty store at revision 0. onChange, if not nil, is called
// after every mutation that changed the visible contents, outside the lock,
// so it may call Snapshot.
func New(onChange func()) *Store {
	return &Store{onChange: onChange, index: map[key]int{}}
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
	return s.notify(changed)
}

// Upsert replaces the entry with the same type and target, or appends a new
// one. It reports a change only when some field actually differs, so a retry
// that reproduces identical outcomes causes no beat.
func (s *Store) Upsert(a wire.Action) bool {
	s.mu.Lock()
	k := key{a.Type, a.Target}
	changed := true
	if i, ok := s.index[k]; ok {
		changed = s.entries[i] != a
		s.entries[i] = a
	} else {
		s.index[k] = len(s.entries)
		s.entries = append(s.entries, a)
	}
	s.mu.Unlock()
	return s.notify(changed)
}

// Prune removes the entries of type typ whose target is not in keep and whose
// status is not done: done reports stay visible for the revision. The healer
// uses it to retire reports for nodes that recovered by themselves.
func (s *Store) Prune(typ string, keep map[string]bool) bool {
	return s.remove(func(a wire.Action) bool {
		return a.Type == typ && !keep[a.Target] && a.Status != wire.StatusDone
	})
}

// ClearType removes every entry of type typ, done or not, and keeps the
// revision. The executor calls it when a capability is switched off, so that
// capability's reports go even when the revision is unchanged (closing
// CONTRACT §13 G-2, where begin with the same revision kept them forever).
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
	return s.notify(changed)
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

// Revision returns the revision of the current pass, 0 after Clear.
func (s *Store) Revision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision
}

// remove drops the entries drop selects, keeping the others in order.
func (s *Store) remove(drop func(wire.Action) bool) bool {
	s.mu.Lock()
	kept := s.entries[:0]
	for _, a := range s.entries {
		if !drop(a) {
			kept = append(kept, a)
		}
	}
	changed := len(kept) != len(s.entries)
	if changed {
		clear(s.entries[len(kept):])
		s.entries = kept
		s.index = make(map[key]int, len(kept))
		for i, a := range kept {
			s.index[key{a.Type, a.Target}] = i
		}
	}
	s.mu.Unlock()
	return s.notify(changed)
}

// reset empties the entries; the caller holds the lock.
func (s *Store) reset() {
	s.entries = nil
	s.index = map[key]int{}
}

// notify calls onChange when changed; it must run without the lock held.
func (s *Store) notify(changed bool) bool {
	if changed && s.onChange != nil {
		s.onChange()
	}
	return changed
}
