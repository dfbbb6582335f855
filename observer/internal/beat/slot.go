package beat

import "sync"

// slot holds at most one value, always the newest put, so a slow reader never
// makes a writer block or memory grow.
type slot[T any] struct {
	mu   sync.Mutex
	val  T
	seq  uint64 // bumps on every put, naming the value without comparing it
	full bool
	// ready carries a token exactly while the slot holds a value put after
	// the last peek. Both sides touch it under mu, so a token is never stale.
	ready chan struct{}
}

func newSlot[T any]() *slot[T] {
	return &slot[T]{ready: make(chan struct{}, 1)}
}

// put replaces whatever the slot holds and never blocks.
func (s *slot[T]) put(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.val, s.full = v, true
	s.seq++
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// peek returns the value without removing it, so a failed send can be
// retried with whatever is newest by then.
func (s *slot[T]) peek() (T, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drainLocked()
	return s.val, s.seq, s.full
}

// clearIf empties the slot only if it still holds the value seq names; a
// value put meanwhile has not been delivered and must stay.
func (s *slot[T]) clearIf(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full && s.seq == seq {
		var zero T
		s.val, s.full = zero, false
	}
}

// take removes and returns the value.
func (s *slot[T]) take() (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drainLocked()
	v, ok := s.val, s.full
	var zero T
	s.val, s.full = zero, false
	return v, ok
}

func (s *slot[T]) drainLocked() {
	select {
	case <-s.ready:
	default:
	}
}
