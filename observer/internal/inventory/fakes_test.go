package inventory

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/wire"
)

const interval = time.Minute

// t0 is the injected now; not UTC and not on a whole second, so the patch
// shows both the conversion and the truncation.
var t0 = time.Date(2026, 7, 6, 14, 0, 0, 700_000_000, time.FixedZone("CEST", 2*3600))

const t0Stamp = "2026-07-06T12:00:00Z"

// env is a fake apiserver holding (or not) the CR, and a Manager on it.
type env struct {
	t        *testing.T
	client   *fake.FakeDynamicClient
	clk      *clocktesting.FakeClock
	logs     *recorder
	m        *Manager
	notified atomic.Int32
	gets     atomic.Int32

	mu       sync.Mutex // guards the failure injection and the journal
	getErr   error
	patchErr error
	patches  []k8stesting.PatchActionImpl
}

// newEnv starts a fake apiserver holding the CR given as JSON ("" for none).
func newEnv(t *testing.T, crJSON string) *env {
	t.Helper()
	var objs []runtime.Object
	if crJSON != "" {
		objs = append(objs, crObject(t, crJSON))
	}
	e := &env{t: t, clk: clocktesting.NewFakeClock(t0), logs: &recorder{}}
	e.client = fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{GVR: "ClusterInventoryList"}, objs...)
	e.client.PrependReactor("get", GVR.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		e.gets.Add(1)
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.getErr != nil, nil, e.getErr
	})
	e.client.PrependReactor("patch", GVR.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.patches = append(e.patches, a.(k8stesting.PatchActionImpl))
		return e.patchErr != nil, nil, e.patchErr
	})
	e.m = e.newManager()
	return e
}

// newManager is a fresh process on the same cluster.
func (e *env) newManager() *Manager {
	return New(e.client, e.clk, Options{Interval: interval, Log: slog.New(e.logs), Notify: func() { e.notified.Add(1) }})
}

// restart replaces the manager, as a restarted process would, and reads.
func (e *env) restart() {
	e.m = e.newManager()
	e.read()
}

func (e *env) read() { e.m.refresh(context.Background()) }

func (e *env) apply(v platform.Verdict) { e.m.Apply(context.Background(), v) }

// Verdicts: an explicit clear, a list, and a single entry.
func clearVerdict() platform.Verdict {
	return platform.Verdict{Present: true, Updates: []wire.AvailableUpdate{}}
}

func listVerdict(u ...wire.AvailableUpdate) platform.Verdict {
	return platform.Verdict{Present: true, Updates: u}
}

func up(name, current, latest string) wire.AvailableUpdate {
	return wire.AvailableUpdate{Name: name, Current: current, Latest: latest}
}

// failGets makes every GET of the CR fail with err; nil lets them through.
func (e *env) failGets(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.getErr = err
}

// failPatches makes every PATCH of the CR fail with err; nil lets them through.
func (e *env) failPatches(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.patchErr = err
}

// statusPatches returns the patches attempted on the status subresource,
// and fails the test on a patch anywhere else.
func (e *env) statusPatches() []k8stesting.PatchActionImpl {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.patches {
		if p.GetSubresource() != "status" || p.GetName() != Name {
			e.t.Fatalf("patch on %s/%s; only %s/status may be patched", p.GetName(), p.GetSubresource(), Name)
		}
	}
	return slices.Clone(e.patches)
}

// wantPatches fails unless exactly n status patches were attempted so far.
func (e *env) wantPatches(n int) {
	e.t.Helper()
	if got := len(e.statusPatches()); got != n {
		e.t.Fatalf("%d status patches, want %d", got, n)
	}
}

// The CR as the apiserver stores it. These go to the tracker directly, so
// they are neither the manager's GETs nor patches it sent.

// object returns the stored CR, or nil when there is none.
func (e *env) object() map[string]any {
	e.t.Helper()
	obj, err := e.client.Tracker().Get(GVR, "", Name)
	if err != nil {
		return nil
	}
	return obj.(*unstructured.Unstructured).Object
}

// putCR creates or replaces the CR with the given members.
func (e *env) putCR(members string) {
	e.t.Helper()
	tr := e.client.Tracker()
	obj := crObject(e.t, members)
	_, err := tr.Get(GVR, "", Name)
	if err != nil {
		err = tr.Create(GVR, obj, "")
	} else {
		err = tr.Update(GVR, obj, "")
	}
	if err != nil {
		e.t.Fatalf("store CR: %v", err)
	}
}

func (e *env) deleteCR() {
	e.t.Helper()
	if err := e.client.Tracker().Delete(GVR, "", Name); err != nil {
		e.t.Fatalf("delete CR: %v", err)
	}
}

// crObject builds the CR from the JSON of its spec and status members, e.g.
// `"spec": {...}`; apiVersion, kind and name are added.
func crObject(t *testing.T, members string) *unstructured.Unstructured {
	t.Helper()
	doc := `{"apiVersion":"lok8s.dev/v1alpha1","kind":"ClusterInventory","metadata":{"name":"cluster"}`
	if members != "{}" {
		doc += "," + members
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc+"}"), &obj); err != nil {
		t.Fatalf("bad CR fixture %s: %v", members, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// recorder is an slog handler that keeps each record as "LEVEL message".
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, rec.Level.String()+" "+rec.Message)
	return nil
}

// count returns how many records at level were logged.
func (r *recorder) count(level slog.Level) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if strings.HasPrefix(l, level.String()+" ") {
			n++
		}
	}
	return n
}

// text returns every record logged so far, a line each.
func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}
