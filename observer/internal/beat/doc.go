// Package beat builds the observer's heartbeat, decides when to send it and
// delivers it.
//
// Build turns every source's current view into one capped schema-2 payload.
// Decide is the pure cadence rule. Both read no clock and do no I/O, so what
// a beat carries and when it goes are pinned by table tests at exact
// boundaries. Loop calls Decide and Build; Sender is the single-slot delivery
// loop: the loop hands it the newest payload and never waits on the network.
package beat
