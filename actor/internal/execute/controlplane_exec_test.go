package execute_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/actor/internal/cpversion"
	"kubehz.dev/agent/shared/wire"
)

// TestUpgrade_OneUpgradedAPIServerNeverOpensTheGate: the control plane is
// halfway from v1.34 to v1.35; /version answers from the one apiserver
// already at v1.35.6 while two control-plane Nodes still run v1.34.3. Over
// three passes 5 s apart nothing rolls to v1.35.6: the first two wait for
// the changed minimum to hold, the third names it.
func TestUpgrade_OneUpgradedAPIServerNeverOpensTheGate(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.nodes = map[string]string{"cp-1": "v1.35.6", "cp-2": "v1.34.3", "cp-3": "v1.34.3"}
	doc := upgrading(9, "v1.35.6", "pool-a")
	for pass := range 3 {
		if pass > 0 {
			h.clock.advance(5 * time.Second)
		}
		h.exec.Execute(t.Context(), doc)
		if len(h.patcher.patches) != 0 {
			t.Fatalf("pass %d rolled %+v while Nodes cp-2 and cp-3 run v1.34.3", pass+1, h.patcher.patches)
		}
	}
	checkTyped(t, "third pass", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane not yet at target|observed v1.34.3"}})
}

// TestUpgrade_ANewTermRollsOnlyOnceEverySourceAgreedForTenSeconds is the
// control: every source at v1.35.6, and a term that has read nothing yet
// refuses as unknown at 0 s and 5 s and rolls at 10 s.
func TestUpgrade_ANewTermRollsOnlyOnceEverySourceAgreedForTenSeconds(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.nodes = map[string]string{"cp-1": "v1.35.6", "cp-2": "v1.35.6+k3s1", "cp-3": "1.35.6"}
	h.exec.CPGate = cpversion.Gate{} // a new term
	doc := upgrading(9, "v1.35.6", "pool-a")
	for pass := range 2 {
		if pass > 0 {
			h.clock.advance(5 * time.Second)
		}
		h.exec.Execute(t.Context(), doc)
		if len(h.patcher.patches) != 0 {
			t.Fatalf("pass %d rolled %+v before the version held 10 s", pass+1, h.patcher.patches)
		}
		checkTyped(t, "waiting", wire.ActionUpgrade, h.store.Snapshot(),
			[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown"}})
	}
	h.clock.advance(5 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.patcher.patches) != 1 {
		t.Fatalf("patches %+v at 10 s, want pool-a's roll", h.patcher.patches)
	}
	if h.version.calls != 4 {
		t.Errorf("%d reads of the sources, want 4: one a pass, and the direct re-read before the roll", h.version.calls)
	}
}

// TestUpgrade_AFailedSourceClosesATrustedGate: the gate vouches for
// v1.35.6, then one read fails (kube-system pods forbidden): that pass
// refuses, and the next, with every source back, waits again.
func TestUpgrade_AFailedSourceClosesATrustedGate(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.trustControlPlane()
	h.version.err = errors.New(`list kube-apiserver pods in kube-system: pods is forbidden`)
	doc := upgrading(9, "v1.35.6", "pool-a")
	h.exec.Execute(t.Context(), doc)
	h.version.err = nil
	h.clock.advance(5 * time.Second)
	h.exec.Execute(t.Context(), doc)
	if len(h.patcher.patches) != 0 {
		t.Fatalf("patches %+v, want none until the version held again", h.patcher.patches)
	}
	checkTyped(t, "after the failed read", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown"}})
}

// The refusal names why no version is trusted, so the owner sees a missing
// permission in the report and not only in the log; and it reads the same
// on every pass of the same cause, so it is news, and an Event, once.
func TestUpgrade_TheUnknownControlPlaneRefusalNamesTheCauseOnce(t *testing.T) {
	h := rollingHarness(t)
	h.version.version = "v1.35.6"
	h.version.err = errors.New(`list kube-apiserver pods in kube-system: pods is forbidden`)
	doc := upgrading(9, "v1.35.6", "pool-a")
	for range 3 {
		h.exec.Execute(t.Context(), doc)
		h.clock.advance(5 * time.Second)
	}
	checkTyped(t, "a source forbidden", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown|pods is forbidden"}})
	events := 0
	for _, e := range h.events.events {
		if strings.Contains(e.Message, "control plane version unknown") {
			events++
		}
	}
	if events != 1 {
		t.Errorf("%d Events for three passes of one cause, want 1: %+v", events, h.events.events)
	}

	// Readable again: the refusal says the version is waiting to hold, not
	// that it cannot be read.
	h.version.err = nil
	h.exec.Execute(t.Context(), doc)
	checkTyped(t, "every source readable, not yet stable", wire.ActionUpgrade, h.store.Snapshot(),
		[]report{{"pool-a", wire.StatusFailed, 9, "control plane version unknown|v1.35.6 is trusted once every source agrees"}})
}
