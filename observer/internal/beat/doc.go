// Package beat decides when the observer sends a heartbeat and delivers it.
//
// Decide is the pure cadence rule: it reads no clock and does no I/O, so the
// coalescer that calls it can be tested at exact boundaries. Sender is the
// single-slot delivery loop: the coalescer hands it the newest payload and
// never waits on the network.
package beat
