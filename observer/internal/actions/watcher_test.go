package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

// Counts of notifications are checked only after stop: once Run has
// returned no handler or timer can still fire, so "exactly n" is exact.

func TestWatcher_FoldsTheReportWhileTheLeaseIsLive(t *testing.T) {
	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(twoActions)
	h.run.Stop()
	if n := h.notified.Load(); n != 1 {
		t.Fatalf("notified %d times, want 1", n)
	}
	if n := h.logs.Count("Actor lease is live", holderA); n != 1 {
		t.Fatalf("liveness logged %d times, want 1:\n%s", n, h.logs)
	}
}

func TestWatcher_DropsTheReportExactlyWhenTheLeaseLapses(t *testing.T) {
	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(twoActions)
	h.awaitNotified(1)
	testkit.Await(t, patience, "the expiry timer", func() bool { return h.clk.Waiters() == 1 })

	h.clk.Step(15*time.Second - time.Nanosecond)
	if got := h.w.Actions(h.clk.Now()); !slices.Equal(got, twoActions) {
		t.Fatalf("one nanosecond before expiry: %v", got)
	}
	h.clk.Step(time.Nanosecond) // exactly renewTime + leaseDurationSeconds
	h.awaitNotified(2)
	h.awaitActions(nil)
	h.run.Stop()
	if n := h.notified.Load(); n != 2 {
		t.Fatalf("notified %d times, want 2", n)
	}
	if n := h.logs.Count("Actor lease lapsed"); n != 1 {
		t.Fatalf("lapse logged %d times, want 1:\n%s", n, h.logs)
	}
}

func TestWatcher_RenewalKeepsTheReportWithoutABeat(t *testing.T) {
	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(twoActions)
	h.awaitNotified(1)

	h.clk.Step(10 * time.Second)
	h.updateLease(leaseObj(holderA, h.clk.Now(), 15))
	testkit.Await(t, patience, "the new expiry", func() bool { return h.expiry().Equal(t0.Add(25 * time.Second)) })
	h.clk.Step(5 * time.Second) // the old expiry passes
	h.awaitActions(twoActions)

	h.clk.Step(10 * time.Second) // the renewed one
	h.awaitNotified(2)
	h.awaitActions(nil)
	h.run.Stop()
	if n := h.notified.Load(); n != 2 {
		t.Fatalf("notified %d times, want 2: one for the report, one for the lapse", n)
	}
}

func TestWatcher_ReleasedLeaseClearsAtOnce(t *testing.T) {
	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(twoActions)

	// What ReleaseOnCancel writes on a clean shutdown.
	h.updateLease(leaseObj("", t0, 1))
	h.awaitNotified(2)
	h.awaitActions(nil)
	h.run.Stop()
	if n := h.notified.Load(); n != 2 {
		t.Fatalf("notified %d times, want 2", n)
	}
}

func TestWatcher_DeletedLeaseOrReportClears(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(h *harness) error
	}{
		{name: "lease", delete: func(h *harness) error {
			return h.client.CoordinationV1().Leases(ns).Delete(context.Background(), report.LeaseName, metav1.DeleteOptions{})
		}},
		{name: "report", delete: func(h *harness) error {
			return h.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), report.ConfigMapName, metav1.DeleteOptions{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
			h.awaitActions(twoActions)
			if err := tc.delete(h); err != nil {
				t.Fatal(err)
			}
			h.awaitNotified(2)
			h.awaitActions(nil)
		})
	}
}

func TestWatcher_ActorStartingLaterBringsItsReport(t *testing.T) {
	h := start(t, reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(nil)
	if _, err := h.client.CoordinationV1().Leases(ns).Create(context.Background(),
		leaseObj(holderA, t0, 15), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.awaitNotified(1)
	h.awaitActions(twoActions)
	h.run.Stop()
	if n := h.notified.Load(); n != 1 {
		t.Fatalf("notified %d times, want 1", n)
	}
}

func TestWatcher_StaleLeaseAtStartShowsNothing(t *testing.T) {
	h := start(t, leaseObj(holderA, t0.Add(-time.Hour), 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.clk.Step(time.Hour)
	h.run.Stop()
	if got := h.w.Actions(h.clk.Now()); got != nil {
		t.Fatalf("actions %v from a lapsed lease", got)
	}
	if n := h.notified.Load(); n != 0 {
		t.Fatalf("notified %d times, want 0", n)
	}
	if n := h.logs.Count("Actor lease is live"); n != 0 {
		t.Fatalf("a lapsed lease was logged live:\n%s", h.logs)
	}
}

func TestWatcher_LogsEachDecodeProblemOnceAndNeverTheData(t *testing.T) {
	const marker = "MARKER-rm-rf"
	bad := func(i int) string {
		return fmt.Sprintf(`{"revision":7,"holder":%q,"actions":[
			{"type":"scale","target":"pool-a","status":"done","detail":"replicas 2 to 3","revision":7},
			{"type":"%s-%d","target":"pool-x","status":"done","revision":7},
			{"type":"heal","target":"wrk-b","status":"%s","revision":7},
			{"type":"heal","target":"wrk-b","status":"pending","revision":7}]}`, holderA, marker, i, marker)
	}
	want := []wire.Action{twoActions[0], twoActions[1]}
	h := start(t, leaseObj(holderA, t0, 15), rawCM(ns, report.ConfigMapName, bad(1)))
	h.awaitActions(want)

	// The same problems in a rewritten document are not news.
	h.updateReport(rawCM(ns, report.ConfigMapName, bad(2)))
	h.updateReport(reportCM(t, reportBy(holderA, twoActions[0])))
	h.awaitActions(twoActions[:1])
	// Gone and back again, they are.
	h.updateReport(rawCM(ns, report.ConfigMapName, bad(3)))
	h.awaitActions(want)
	h.run.Stop()

	for _, reason := range []report.Reason{report.BadType, report.BadStatus} {
		if n := h.logs.Count("Dropped part of the actor's report", string(reason), `"count":1`); n != 2 {
			t.Errorf("%q logged %d times, want 2 (first sight, and after it cleared):\n%s", reason, n, h.logs)
		}
	}
	if strings.Contains(h.logs.String(), marker) {
		t.Fatalf("the report's data reached the log:\n%s", h.logs)
	}
}

func TestWatcher_OversizedReportIsDroppedWhole(t *testing.T) {
	huge := `{"revision":7,"actions":[]}` + strings.Repeat(" ", 64<<10)
	h := start(t, leaseObj(holderA, t0, 15), rawCM(ns, report.ConfigMapName, huge))
	h.run.Stop()
	if got := h.w.Actions(h.clk.Now()); got != nil {
		t.Fatalf("actions %v from an oversized report", got)
	}
	if n := h.logs.Count("Dropped part of the actor's report", string(report.TooLarge)); n != 1 {
		t.Fatalf("oversize logged %d times, want 1:\n%s", n, h.logs)
	}
}

func TestWatcher_HolderMismatchIsLoggedOnceAndWithheld(t *testing.T) {
	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	h.awaitActions(twoActions)
	// A new holder takes the Lease before it has published anything: the
	// old holder's report must not ride under it.
	h.updateLease(leaseObj(holderB, h.clk.Now(), 15))
	h.awaitActions(nil)
	for i := 1; i <= 3; i++ {
		h.clk.Step(2 * time.Second)
		h.updateLease(leaseObj(holderB, h.clk.Now(), 15))
	}
	testkit.Await(t, patience, "the last renewal", func() bool { return h.expiry().Equal(t0.Add(21 * time.Second)) })
	h.run.Stop()
	if n := h.logs.Count("another holder", holderA, holderB); n != 1 {
		t.Fatalf("mismatch logged %d times, want 1:\n%s", n, h.logs)
	}
	if n := h.notified.Load(); n != 2 {
		t.Fatalf("notified %d times, want 2 (the reports, then their withdrawal)", n)
	}
}

// Whoever may write the Lease picks its holder's length: it is logged only
// as far as the report's holder may be, 253 characters.
func TestWatcher_ALongLeaseHolderIsLoggedCut(t *testing.T) {
	long := strings.Repeat("h", 100_000)
	h := start(t, leaseObj(long, t0, 15), reportCM(t, reportBy(holderA, twoActions...)))
	testkit.Await(t, patience, "the mismatch logged", func() bool { return h.logs.Count("another holder") == 1 })
	h.run.Stop()
	if n := h.logs.Count("another holder", `"leaseHolder":"`+strings.Repeat("h", 253)+`"`); n != 1 {
		t.Errorf("the mismatch line does not quote the holder cut to 253 characters:\n%.2000s", h.logs)
	}
	if n := h.logs.Count(strings.Repeat("h", 254)); n != 0 {
		t.Errorf("%d lines quote more than 253 characters of the holder", n)
	}
}

func TestWatcher_WatchesOnlyItsTwoObjectsByName(t *testing.T) {
	decoy := reportBy(holderA, wire.Action{Type: wire.ActionScale, Target: "decoy", Status: wire.StatusFailed})
	decoyCM := reportCM(t, decoy)
	decoyCM.Name = report.ConfigMapName + "-old"
	elsewhere := reportCM(t, decoy)
	elsewhere.Namespace = "default"
	otherLease := leaseObj(holderB, t0, 3600)
	otherLease.Name = "kube-controller-manager"

	h := start(t, leaseObj(holderA, t0, 15), reportCM(t, reportBy(holderA, twoActions...)),
		decoyCM, elsewhere, otherLease)
	h.awaitActions(twoActions)
	h.run.Stop()

	wantSelector := map[string]string{
		"configmaps": "metadata.name=" + report.ConfigMapName,
		"leases":     "metadata.name=" + report.LeaseName,
	}
	seen := map[string]bool{}
	for _, act := range h.client.Actions() {
		res := act.GetResource().Resource
		var selector string
		switch a := act.(type) {
		case clienttesting.ListActionImpl:
			selector = a.GetListRestrictions().Fields.String()
		case clienttesting.WatchActionImpl:
			selector = a.GetWatchRestrictions().Fields.String()
		default:
			t.Errorf("unexpected %s %s: the watcher only lists and watches", act.GetVerb(), res)
			continue
		}
		if act.GetNamespace() != ns || selector != wantSelector[res] {
			t.Errorf("%s %s in %q with selector %q, want %q in %q", act.GetVerb(), res, act.GetNamespace(), selector, wantSelector[res], ns)
		}
		seen[act.GetVerb()+" "+res] = true
	}
	for _, want := range []string{"list configmaps", "watch configmaps", "list leases", "watch leases"} {
		if !seen[want] {
			t.Errorf("never saw %s; saw %v", want, seen)
		}
	}
}
