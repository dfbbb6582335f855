package clustersim

// FailCreates makes Machines created for pool from now on carry
// status.errorReason and errorMessage and never join a Node. An empty
// reason lets later creates succeed again; failed Machines stay failed.
func (s *Sim) FailCreates(pool, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reason == "" {
		delete(s.failing, pool)
		return
	}
	s.failing[pool] = failure{reason: reason, message: message}
}

// StallDeletes holds (stall true) or releases the finalizer of pool's
// deleting Machines, so they and their Nodes stay until released.
func (s *Sim) StallDeletes(pool string, stall bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stall {
		s.stalled[pool] = true
		return
	}
	delete(s.stalled, pool)
}

// HoldJoins keeps (hold true) pool's Machines that have not joined yet from
// joining: no Node registers and status.nodeRef stays unset, as when a
// server never boots. Released, each joins once JoinDelay has passed since
// its creation, so one held longer than that joins at the next pass.
func (s *Sim) HoldJoins(pool string, hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hold {
		s.held[pool] = true
		return
	}
	delete(s.held, pool)
}

func (s *Sim) isHeld(pool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[pool]
}

func (s *Sim) isStalled(pool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stalled[pool]
}

func (s *Sim) failureFor(pool string) *failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.failing[pool]
	if !ok {
		return nil
	}
	return &f
}
