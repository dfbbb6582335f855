package inventory

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/platform"
)

const observed = `"observedAddons": [{"name": "cilium", "ready": true}]`

func withStatus(status string) string { return specCR + `, "status": {` + status + `}` }

// status returns the stored CR's status.
func (e *env) status() map[string]any {
	e.t.Helper()
	s, _ := e.object()["status"].(map[string]any)
	return s
}

func TestApply_OneMergePatchOnStatusWithExactlyTwoKeys(t *testing.T) {
	e := newEnv(t, withStatus(observed))
	e.read()
	specBefore := e.object()["spec"]

	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.4")))

	patches := e.statusPatches()
	if len(patches) != 1 {
		t.Fatalf("%d status patches, want 1", len(patches))
	}
	p := patches[0]
	if p.GetPatchType() != types.MergePatchType || p.PatchOptions.FieldManager != FieldManager {
		t.Errorf("patch type %s, fieldManager %q; want %s, %q", p.GetPatchType(), p.PatchOptions.FieldManager,
			types.MergePatchType, FieldManager)
	}
	want := `{"status":{"availableUpdates":[{"name":"cilium","current":"1.16.1","latest":"1.17.4"}],"lastReported":"` + t0Stamp + `"}}`
	if got := string(p.GetPatch()); got != want {
		t.Errorf("patch body\n got %s\nwant %s", got, want)
	}
	if got := e.object()["spec"]; !reflect.DeepEqual(got, specBefore) {
		t.Errorf("spec changed to %v", got)
	}
	s := e.status()
	if _, ok := s["observedAddons"]; !ok || len(s) != 3 || s["lastReported"] != t0Stamp {
		t.Errorf("status %v: want observedAddons intact beside availableUpdates and lastReported", s)
	}
}

func TestApply_Idempotence(t *testing.T) {
	list := listVerdict(up("cilium", "1.16.1", "1.17.4"), up("coredns", "", "1.12.0"))
	recorded := `"availableUpdates": [{"name": "cilium", "current": "1.16.1", "latest": "1.17.4"},
		{"name": "coredns", "latest": "1.12.0"}], "lastReported": "2026-07-01T00:00:00Z"`

	t.Run("a repeated list costs no patch", func(t *testing.T) {
		e := newEnv(t, specCR)
		e.read()
		e.apply(list)
		e.apply(list)
		e.read()
		e.apply(list)
		e.wantPatches(1)
	})
	t.Run("a restarted manager whose CR already matches costs no patch", func(t *testing.T) {
		e := newEnv(t, withStatus(recorded))
		e.read()
		e.apply(list)
		e.restart()
		e.apply(list)
		e.wantPatches(0)
	})
	t.Run("a changed list patches, and order counts", func(t *testing.T) {
		e := newEnv(t, withStatus(recorded))
		e.read()
		e.apply(listVerdict(up("cilium", "1.16.1", "1.18.0"), up("coredns", "", "1.12.0")))
		e.wantPatches(1)
		e.apply(listVerdict(up("coredns", "", "1.12.0"), up("cilium", "1.16.1", "1.18.0")))
		e.wantPatches(2)
	})
}

func TestApply_NoCROrAlreadyClearCostsNoPatch(t *testing.T) {
	e := newEnv(t, "")
	e.read()
	e.apply(listVerdict(up("cilium", "1", "2")))
	e.apply(clearVerdict())
	e.wantPatches(0)

	e = newEnv(t, withStatus(`"availableUpdates": [], "lastReported": "2026-07-01T00:00:00Z"`))
	e.read()
	e.apply(platform.Verdict{Present: true}) // a nil list
	e.apply(clearVerdict())
	e.wantPatches(0)
	if n := e.logs.count(slog.LevelWarn); n != 0 {
		t.Errorf("%d warnings, want none", n)
	}
}

func TestApply_FreshCRFirstEmptyVerdictWritesOnce(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.apply(platform.Verdict{}) // no verdict: not even lastReported
	e.wantPatches(0)

	e.apply(clearVerdict())
	patches := e.statusPatches()
	if len(patches) != 1 {
		t.Fatalf("%d status patches, want 1", len(patches))
	}
	if got, want := string(patches[0].GetPatch()), `{"status":{"availableUpdates":[],"lastReported":"`+t0Stamp+`"}}`; got != want {
		t.Errorf("patch body %s, want %s", got, want)
	}
	if list, ok := e.status()["availableUpdates"].([]any); !ok || len(list) != 0 {
		t.Errorf("status.availableUpdates = %#v, want an explicit []", e.status()["availableUpdates"])
	}

	e.apply(clearVerdict())
	e.restart()
	e.apply(clearVerdict())
	e.apply(platform.Verdict{})
	e.wantPatches(1)
}

func TestApply_NilListOnFreshCRWritesExplicitEmptyList(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.apply(platform.Verdict{Present: true})
	patches := e.statusPatches()
	if len(patches) != 1 || string(patches[0].GetPatch()) != `{"status":{"availableUpdates":[],"lastReported":"`+t0Stamp+`"}}` {
		t.Fatalf("patches %v, want one writing []", patches)
	}
}

func TestApply_StaleEntriesClearedOnceByEmptyVerdict(t *testing.T) {
	e := newEnv(t, withStatus(`"availableUpdates": [{"name": "cilium", "current": "1.15.0", "latest": "1.16.1"}], `+observed))
	e.read()
	e.apply(clearVerdict())
	e.wantPatches(1)
	s := e.status()
	if list, ok := s["availableUpdates"].([]any); !ok || len(list) != 0 {
		t.Errorf("status.availableUpdates = %#v, want an explicit []", s["availableUpdates"])
	}
	if _, ok := s["observedAddons"]; !ok {
		t.Errorf("status %v lost observedAddons", s)
	}
	e.apply(clearVerdict())
	e.restart()
	e.apply(clearVerdict())
	e.wantPatches(1)
}

func TestApply_AllInvalidVerdictDoesNotClear(t *testing.T) {
	stale := `"availableUpdates": [{"name": "cilium", "latest": "1.17.4"}]`
	for _, cr := range []string{withStatus(stale), specCR} {
		e := newEnv(t, cr)
		e.read()
		before := e.status()
		e.apply(listVerdict(up("", "1.0", "2.0"), up("", "", "")))
		e.wantPatches(0)
		if got := e.status(); !reflect.DeepEqual(got, before) {
			t.Errorf("status %v, want unchanged %v", got, before)
		}
	}
}

func TestApply_ForbiddenPatchWarnsOnceAndKeepsSnapshot(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.failPatches(errForbidden)
	for range 3 {
		e.apply(listVerdict(up("cilium", "1.16.1", "1.17.4")))
	}
	e.failPatches(apierrors.NewForbidden(GVR.GroupResource(), Name, errors.New("another reason")))
	e.apply(clearVerdict())
	e.read()
	e.apply(clearVerdict())

	e.wantPatches(5)
	if n := e.logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings, want exactly 1 per process", n)
	}
	if got := e.m.Snapshot(); !reflect.DeepEqual(got, specSnapshot) || e.notified.Load() != 1 {
		t.Errorf("snapshot %+v after %d notifications, want the spec kept", got, e.notified.Load())
	}
}

func TestApply_NotFoundPatchClearsSnapshotAndNotifies(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.deleteCR()
	e.apply(clearVerdict())
	if got := e.m.Snapshot(); got != nil || e.notified.Load() != 2 {
		t.Errorf("snapshot %+v after %d notifications; want nil after 2", got, e.notified.Load())
	}
	e.apply(clearVerdict()) // known absent now: no further patch
	e.wantPatches(1)
	if n := e.logs.count(slog.LevelWarn); n != 0 {
		t.Errorf("%d warnings, want none", n)
	}
}

// A ClusterInventory CRD without the status subresource answers every
// status patch with a NotFound naming the CR (apiextensions-apiserver's
// customresource_handler, v0.37.2), as a deleted CR's patch is answered,
// while the CR is there: the inventory stays on the beat and the observer
// says once why nothing is written. TestApply_NotFoundPatchClearsSnapshot…
// is the control: the same answer for a CR that is gone drops it.
func TestApply_AStatusPathNotServedKeepsTheInventoryAndWarnsOnce(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.failPatches(apierrors.NewNotFound(schema.GroupResource{Group: "lok8s.dev", Resource: "clusterinventories"}, Name))
	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.4")))
	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.5")))
	if got := e.m.Snapshot(); !reflect.DeepEqual(got, specSnapshot) || e.notified.Load() != 1 {
		t.Errorf("snapshot %+v after %d notifications, want the spec kept and no news", got, e.notified.Load())
	}
	if n := e.logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
	e.wantPatches(2)
}

// A NotFound patch whose follow-up read fails tells a deleted CR from a CRD
// without the status subresource neither way: the CR stays, nothing is
// concluded about the CRD, and once the read answers the warning about it
// still comes.
func TestApply_ANotFoundPatchWithAFailedReadConcludesNothing(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.failPatches(apierrors.NewNotFound(schema.GroupResource{Group: "lok8s.dev", Resource: "clusterinventories"}, Name))
	e.failGets(apierrors.NewServiceUnavailable("etcd leader changed"))
	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.4")))
	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.3")))
	if got := e.m.Snapshot(); !reflect.DeepEqual(got, specSnapshot) {
		t.Errorf("snapshot %+v, want the spec kept", got)
	}
	if n := e.logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings after the same failed read twice, want 1", n)
	}
	if lines := e.logs.text(); strings.Contains(lines, "no status subresource") {
		t.Errorf("a failed read was taken for a CRD without the status subresource:\n%s", lines)
	}
	e.failGets(nil)
	e.apply(listVerdict(up("cilium", "1.16.1", "1.17.5")))
	if lines := e.logs.text(); strings.Count(lines, "no status subresource") != 1 {
		t.Errorf("want one warning about the status subresource once the CR reads:\n%s", lines)
	}
}

func TestApply_OtherPatchErrorWarnsOncePerDistinctMessageAndRetries(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	v := listVerdict(up("cilium", "1.16.1", "1.17.4"))
	for _, step := range []struct {
		err   error
		warns int
	}{
		{errors.New("etcdserver: request timed out"), 1},
		{errors.New("etcdserver: request timed out"), 1},
		{apierrors.NewServiceUnavailable("apiserver shutting down"), 2},
		{nil, 2},
		{errors.New("etcdserver: request timed out"), 2}, // written: the same verdict costs nothing
	} {
		e.failPatches(step.err)
		e.apply(v)
		if n := e.logs.count(slog.LevelWarn); n != step.warns {
			t.Fatalf("after %v: %d warnings, want %d", step.err, n, step.warns)
		}
	}
	e.wantPatches(4)
}

func TestManager_ConcurrentRunSnapshotApplyIsRaceFree(t *testing.T) {
	e := newEnv(t, specCR)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.m.Run(ctx) }()

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				switch (w + i) % 3 {
				case 0:
					e.m.Apply(ctx, listVerdict(up("cilium", "1.16.1", "1.17.4")))
				case 1:
					e.m.Apply(ctx, clearVerdict())
				default:
					_ = e.m.Snapshot()
					e.clk.Step(interval)
				}
			}
		})
	}
	wg.Wait()
	// Run may not have read the CR yet on a loaded machine; the point is the
	// race detector's verdict on the concurrent calls, then the end state.
	for deadline := time.Now().Add(10 * time.Second); e.m.Snapshot() == nil && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
	if got := e.m.Snapshot(); !reflect.DeepEqual(got, specSnapshot) {
		t.Errorf("snapshot %+v, want %+v", got, specSnapshot)
	}
}
