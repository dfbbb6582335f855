package inventory

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/wire"
)

const specCR = `"spec": {"lok8sVersion": "0.9.2", "kind": "managed", "specHash": "h1", "renderedAt": "2026-07-06T09:00:00Z",
	"addons": [{"name": "cilium", "chartVersion": "1.16.1", "source": "addon"}]}`

var specSnapshot = &wire.Inventory{Lok8sVersion: "0.9.2", Kind: "managed", SpecHash: "h1",
	RenderedAt: "2026-07-06T09:00:00Z", Addons: []wire.Addon{{Name: "cilium", ChartVersion: "1.16.1", Source: "addon"}}}

var errForbidden = apierrors.NewForbidden(GVR.GroupResource(), Name, errors.New("RBAC: no rule"))

// run starts the manager's poll in the test's bubble and returns a stop
// that cancels it and checks that Run returns nil.
func (e *env) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.m.Run(ctx) }()
	synctest.Wait()
	return func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Run returned %v, want nil", err)
		}
	}
}

// tick moves the fake clock one interval and lets the poll settle.
func (e *env) tick() {
	e.clk.Step(interval)
	synctest.Wait()
}

// want checks the snapshot, the notification count and the GET count.
func (e *env) want(snapshot *wire.Inventory, notified, gets int) {
	e.t.Helper()
	if got := e.m.Snapshot(); !reflect.DeepEqual(got, snapshot) {
		e.t.Errorf("snapshot %+v, want %+v", got, snapshot)
	}
	if got := int(e.notified.Load()); got != notified {
		e.t.Errorf("notified %d times, want %d", got, notified)
	}
	if got := int(e.gets.Load()); got != gets {
		e.t.Errorf("%d GETs, want %d", got, gets)
	}
}

func TestRun_ReadsNowThenEveryIntervalAndReturnsNilOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, specCR)
		stop := e.run()
		e.want(specSnapshot, 1, 1)
		e.clk.Step(interval - time.Second)
		synctest.Wait()
		e.want(specSnapshot, 1, 1)
		e.clk.Step(time.Second)
		synctest.Wait()
		e.want(specSnapshot, 1, 2)
		e.tick()
		e.want(specSnapshot, 1, 3)
		stop()
	})
}

func TestRun_FirstReadNotifiesOnceUnchangedReadIsSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, specCR)
		stop := e.run()
		e.want(specSnapshot, 1, 1)
		e.tick()
		e.tick()
		e.want(specSnapshot, 1, 3)

		// Status is the agent's own business, not the beat's.
		e.putCR(specCR + `, "status": {"availableUpdates": [{"name": "cilium"}], "lastReported": "x"}`)
		e.tick()
		e.want(specSnapshot, 1, 4)

		e.putCR(`"spec": {"lok8sVersion": "0.9.3"}`)
		e.tick()
		e.want(&wire.Inventory{Lok8sVersion: "0.9.3"}, 2, 5)
		stop()
	})
}

func TestSnapshot_IsACopy(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	got := e.m.Snapshot()
	got.Kind = "changed"
	got.Addons[0].Name = "changed"
	got.Addons = append(got.Addons, wire.Addon{Name: "extra"})
	if again := e.m.Snapshot(); !reflect.DeepEqual(again, specSnapshot) {
		t.Errorf("snapshot after changing a copy: %+v, want %+v", again, specSnapshot)
	}
}

func TestRun_AbsentCRIsSilentAndDeletionNotifies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "")
		stop := e.run()
		e.tick()
		e.want(nil, 0, 2)

		e.putCR(specCR)
		e.tick()
		e.want(specSnapshot, 1, 3)

		e.deleteCR()
		e.tick()
		e.want(nil, 2, 4)
		e.tick()
		e.want(nil, 2, 5)
		stop()
		if n := len(e.logs.lines); n != 0 {
			t.Errorf("NotFound logged %d records %v, want none", n, e.logs.lines)
		}
	})
}

func TestRun_ForbiddenReadGivesNilAndLogsOncePerDistinctError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, specCR)
		e.failGets(errForbidden)
		stop := e.run()
		e.tick()
		e.tick()
		e.want(nil, 0, 3)
		if n := e.logs.count(slog.LevelWarn); n != 1 {
			t.Errorf("%d warnings for a repeated Forbidden, want 1", n)
		}

		e.failGets(errors.New("dial tcp: connection refused"))
		e.tick()
		e.tick()
		if n := e.logs.count(slog.LevelWarn); n != 2 {
			t.Errorf("%d warnings after a second distinct error, want 2", n)
		}

		// Recovery shows the spec; a Forbidden read after it drops it again.
		e.failGets(nil)
		e.tick()
		e.want(specSnapshot, 1, 6)
		e.failGets(errForbidden)
		e.tick()
		e.want(nil, 2, 7)
		stop()
	})
}

// A read that fails for a reason that says nothing about the CR (a
// timeout, a 5xx, a refused connection) keeps the last one: the inventory
// does not leave the beat and come back. A NotFound after it still drops it.
func TestRun_ATransientReadErrorKeepsTheLastInventory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, specCR)
		stop := e.run()
		e.want(specSnapshot, 1, 1)
		for _, err := range []error{
			apierrors.NewServiceUnavailable("etcd leader changed"),
			apierrors.NewTimeoutError("request timed out", 1),
			errors.New("dial tcp: connection refused"),
		} {
			e.failGets(err)
			e.tick()
		}
		e.want(specSnapshot, 1, 4)
		if n := e.logs.count(slog.LevelWarn); n != 3 {
			t.Errorf("%d warnings for three distinct errors, want 3", n)
		}
		e.failGets(apierrors.NewNotFound(schema.GroupResource{Group: "lok8s.dev", Resource: "clusterinventories"}, Name))
		e.tick()
		e.want(nil, 2, 5)
		stop()
	})
}

// A read that began before a write-back and lands after it carries the old
// status; it must not make the next identical verdict patch again.
func TestRefresh_ReadBegunBeforeAWriteDoesNotUndoIt(t *testing.T) {
	e := newEnv(t, specCR)
	e.read()
	e.m.mu.Lock()
	epoch := e.m.epoch
	e.m.mu.Unlock()
	stale := readingFrom(e.object())

	e.apply(clearVerdict())
	e.m.store(epoch, stale, nil)
	e.apply(clearVerdict())
	e.wantPatches(1)
}

// A non-positive interval means the contract's default: a read every
// minute, KUBEHZ_FULL_INTERVAL's default (README, Configuration), written
// as a number.
func TestRun_NonPositiveIntervalReadsEveryMinute(t *testing.T) {
	for _, given := range []time.Duration{0, -time.Second} {
		t.Run(given.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, specCR)
				e.m = New(e.client, e.clk, Options{Interval: given, Log: slog.New(e.logs), Notify: func() { e.notified.Add(1) }})
				stop := e.run()
				e.want(specSnapshot, 1, 1)
				e.clk.Step(time.Minute - time.Nanosecond)
				synctest.Wait()
				e.want(specSnapshot, 1, 1)
				e.clk.Step(time.Nanosecond)
				synctest.Wait()
				e.want(specSnapshot, 1, 2)
				stop()
			})
		})
	}
}

// The first beat waits for HasSynced: it holds from the end of the first
// read, whatever that read found (no CRD is the common case), and not
// before it.
func TestManager_HasSyncedOnceTheFirstReadEnded(t *testing.T) {
	for _, cr := range []string{specCR, ""} {
		e := newEnv(t, cr)
		if e.m.HasSynced() {
			t.Fatal("synced before any read")
		}
		e.read()
		if !e.m.HasSynced() {
			t.Errorf("not synced after the first read (CR present: %v)", cr != "")
		}
	}
}
