package execute_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/wire"
)

// During an outage the storm count changes as nodes fail and recover, and
// its text names the count: each change makes every candidate's report new.
// The beat carries them all, but the Events are one per change of the
// storm, never one per candidate, so a zone outage does not flood the
// apiserver with Events.
func TestHeal_StormRecordsOneEventPerChangeNotOnePerCandidate(t *testing.T) {
	h := newHealHarness(t, poolMD("pool-a", 5))
	down := start.Add(-10 * time.Minute)
	for i := 1; i <= 5; i++ {
		h.world.add(machine(fmt.Sprintf("pool-a-m%d", i), "pool-a", fmt.Sprintf("node-%d", i)))
		h.world.addNodes(node(fmt.Sprintf("node-%d", i), "True", down))
	}
	setReady := func(status string, nodes ...int) {
		for _, i := range nodes {
			h.world.nodes[fmt.Sprintf("node-%d", i)] = node(fmt.Sprintf("node-%d", i), status, down)
		}
	}
	doc := healing(7, healPolicy(1, 0))
	storm := func(n int) string {
		return fmt.Sprintf("unhealthy count %d exceeds maxUnhealthy 1 — refusing (possible outage)", n)
	}

	setReady("Unknown", 1, 2, 3)
	h.exec.Execute(t.Context(), doc) // storm of 3
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc) // still 3: no change
	setReady("Unknown", 4)
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc) // 4
	setReady("True", 4)
	h.clock.advance(time.Minute)
	h.exec.Execute(t.Context(), doc) // back to 3

	if len(h.world.machineDeletes) != 0 {
		t.Fatalf("machine deletes %+v in a storm", h.world.machineDeletes)
	}
	checkTyped(t, "the beat keeps every candidate's report", wire.ActionHeal, h.store.Snapshot(), []report{
		{"pool-a-m1", wire.StatusFailed, 7, storm(3)}, {"pool-a-m2", wire.StatusFailed, 7, storm(3)},
		{"pool-a-m3", wire.StatusFailed, 7, storm(3)},
	})
	var got []string
	for _, ev := range h.events.events {
		got = append(got, ev.MD+" "+ev.Reason)
		if !ev.Warning {
			t.Errorf("storm Event %+v is not a Warning", ev)
		}
	}
	want := []string{
		mdNamespace + "/pool-a-m1 KubehzStormBrake", mdNamespace + "/pool-a-m1 KubehzStormBrake",
		mdNamespace + "/pool-a-m1 KubehzStormBrake",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d Events over a storm of 3, 3, 4 and 3 workers:\n%s\nwant one per change:\n%s",
			len(got), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, n := range []int{3, 4, 3} {
		msg := h.events.events[i].Message
		if !strings.Contains(msg, storm(n)) || !strings.Contains(msg, "pool-a-m1") || !strings.Contains(msg, "pool-a-m3") {
			t.Errorf("Event %d says %q, want the storm of %d and the machines it holds back", i, msg, n)
		}
	}
}
