package execute_test

import (
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

// A slow apiserver makes a pass long: the cooldown and the eviction timeout
// run from when the Machine delete returned, never from when the pass
// began, or they would run short by the length of the pass.
func TestHeal_CooldownRunsFromWhenTheDeleteReturnedNotFromThePassStart(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 2))
	down := start.Add(-10 * time.Minute)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.world.addNodes(node("node-1", "False", down), node("node-2", "False", down))
	h.world.slow = func() { h.clock.advance(40 * time.Second) } // every delete takes 40 s
	doc := healing(7, healPolicy(2, 900))
	pass := start.Add(16 * time.Minute) // past the term's own cooldown
	h.clock.set(pass)

	h.exec.Execute(t.Context(), doc)
	if len(h.world.machineDeletes) != 1 {
		t.Fatalf("first pass: machine deletes %+v, want pool-a-m1 only", h.world.machineDeletes)
	}
	returned := pass.Add(40 * time.Second)
	if got := h.exec.Memory.LastHeal["pool-a"]; !got.Equal(returned) {
		t.Errorf("pool-a's last heal = %s, want %s: when the delete returned", got, returned)
	}

	// 900 s after the pass began, but 40 s short of 900 s after the delete.
	h.clock.set(pass.Add(900 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 1 {
		t.Fatalf("%d machine deletes 860 s after the first delete returned, want the 900 s cooldown to hold", n)
	}
	checkTyped(t, "860 s after", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusDone, 7, "node-1"},
		{"pool-a-m2", wire.StatusPending, 7, "cooldown|40s remaining"},
	})

	h.clock.set(returned.Add(900 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if n := len(h.world.machineDeletes); n != 2 {
		t.Errorf("%d machine deletes 900 s after the first returned, want the second", n)
	}
}

func TestUnwedge_EvictionTimeoutRunsFromWhenTheDeleteReturned(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 1))
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"))
	h.world.addNodes(node("node-1", "False", start.Add(-10*time.Minute)))
	h.world.pods = []heal.Pod{stuckPod("apps", "web-0", "node-1")}
	h.world.slow = func() { h.clock.advance(40 * time.Second) }
	doc := healing(7, healPolicy(1, 0))
	h.exec.Execute(t.Context(), doc)
	tr := h.exec.Memory.Tracked["pool-a-m1"]
	if tr == nil {
		t.Fatal("setup: pool-a-m1 not deleted and tracked")
	}
	returned := start.Add(40 * time.Second)
	if !tr.DeletedAt.Equal(returned) {
		t.Errorf("tracked as deleted at %s, want %s: when the delete returned", tr.DeletedAt, returned)
	}

	// 300 s after the pass began: 40 s short of the eviction timeout.
	h.clock.set(start.Add(300 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 0 {
		t.Fatalf("pod deletes %+v 260 s after the Machine delete returned, want none before 300 s", h.world.podDeletes)
	}
	h.clock.set(returned.Add(300 * time.Second))
	h.exec.Execute(t.Context(), doc)
	if len(h.world.podDeletes) != 1 {
		t.Errorf("pod deletes %+v 300 s after the Machine delete returned, want the stuck pod", h.world.podDeletes)
	}
}
