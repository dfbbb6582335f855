package store

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

func TestStore_UpsertReplacesByKeyAndNewTargetAppends(t *testing.T) {
	s := counted()
	s.Begin(7)
	for _, status := range []string{wire.StatusPending, wire.StatusInProgress, wire.StatusDone} {
		if !s.Upsert(act(wire.ActionScale, "pool-a", status, 7)) {
			t.Fatalf("upsert %s reported no change", status)
		}
	}
	if s.n != 3 {
		t.Fatalf("three transitions gave %d changes reported, want 3", s.n)
	}
	s.Upsert(act(wire.ActionScale, "pool-b", wire.StatusPending, 7))
	s.Upsert(act(wire.ActionHeal, "pool-a", wire.StatusPending, 7)) // same target, other type: a new key
	want := []wire.Action{
		act(wire.ActionScale, "pool-a", wire.StatusDone, 7),
		act(wire.ActionScale, "pool-b", wire.StatusPending, 7),
		act(wire.ActionHeal, "pool-a", wire.StatusPending, 7),
	}
	if got := s.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	if s.n != 5 {
		t.Fatalf("changes reported = %d, want 5", s.n)
	}
}

func TestStore_IdenticalRetryOnSameRevisionIsSilent(t *testing.T) {
	s := counted()
	s.Begin(7)
	a := wire.Action{Type: wire.ActionScale, Target: "pool-a", Status: wire.StatusDone, Detail: "already at 3 replicas", Revision: 7}
	s.Upsert(a)
	s.n = 0
	if s.Begin(7) {
		t.Fatal("begin with the same revision reported a change")
	}
	if s.Upsert(a) {
		t.Fatal("identical upsert reported a change")
	}
	if s.n != 0 {
		t.Fatalf("changes reported = %d, want 0", s.n)
	}
	a.Detail = "replicas 2 to 3; reconciling"
	if !s.Upsert(a) || s.n != 1 {
		t.Fatalf("a changed detail must report one change, got %d", s.n)
	}
	if got := s.Snapshot(); len(got) != 1 || got[0] != a {
		t.Fatalf("snapshot = %+v", got)
	}
}

func TestStore_NewRevisionClears(t *testing.T) {
	s := counted()
	if s.Begin(3) {
		t.Fatal("new revision on an empty store reported a change")
	}
	s.Upsert(act(wire.ActionScale, "pool-a", wire.StatusDone, 3))
	s.n = 0
	if !s.Begin(4) || s.n != 1 {
		t.Fatalf("new revision over entries: changes reported = %d, want 1", s.n)
	}
	if got := s.Snapshot(); got != nil {
		t.Fatalf("snapshot after new revision = %+v, want nil", got)
	}
	if s.Revision() != 4 {
		t.Fatalf("revision = %d, want 4", s.Revision())
	}
}

func TestStore_ClearReportsOneChangeAndEmptyClearIsSilent(t *testing.T) {
	s := counted()
	s.Begin(9)
	s.Upsert(act(wire.ActionScale, "pool-a", wire.StatusDone, 9))
	s.Upsert(act(wire.ActionHeal, "node-1", wire.StatusPending, 9))
	s.n = 0
	if !s.Clear() {
		t.Fatal("clear of a full store reported no change")
	}
	if s.Clear() {
		t.Fatal("clear of an empty store reported a change")
	}
	if s.n != 1 {
		t.Fatalf("changes reported = %d, want 1", s.n)
	}
	if s.Snapshot() != nil || s.Revision() != 0 {
		t.Fatalf("after clear: snapshot %+v, revision %d", s.Snapshot(), s.Revision())
	}
	// The revision was reset, so beginning the old revision again is a
	// fresh start, not a change.
	if s.Begin(9) {
		t.Fatal("begin after clear reported a change")
	}
}

func TestStore_ClearTypeKeepsOtherTypesAndRevision(t *testing.T) {
	s := counted()
	s.Begin(5)
	s.Upsert(act(wire.ActionScale, "pool-a", wire.StatusDone, 5))
	s.Upsert(act(wire.ActionHeal, "node-1", wire.StatusDone, 5))
	s.Upsert(act(wire.ActionUpgrade, "pool-a", wire.StatusPending, 5))
	s.Upsert(act(wire.ActionHeal, "node-2", wire.StatusFailed, 5))
	s.n = 0
	if !s.ClearType(wire.ActionHeal) {
		t.Fatal("clearing heal reports reported no change")
	}
	if s.ClearType(wire.ActionHeal) {
		t.Fatal("clearing an absent type reported a change")
	}
	if s.n != 1 {
		t.Fatalf("changes reported = %d, want 1", s.n)
	}
	want := []wire.Action{
		act(wire.ActionScale, "pool-a", wire.StatusDone, 5),
		act(wire.ActionUpgrade, "pool-a", wire.StatusPending, 5),
	}
	if got := s.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	if s.Revision() != 5 || s.Begin(5) {
		t.Fatal("ClearType must keep the revision")
	}
	// Positions are rebuilt: an upsert still replaces in place.
	s.Upsert(act(wire.ActionUpgrade, "pool-a", wire.StatusDone, 5))
	if got := s.Snapshot(); len(got) != 2 || got[1].Status != wire.StatusDone {
		t.Fatalf("snapshot after upsert = %+v", got)
	}
	s.ClearType(wire.ActionScale)
	s.ClearType(wire.ActionUpgrade)
	if s.Snapshot() != nil {
		t.Fatal("a store emptied by ClearType must snapshot nil")
	}
}

func TestStore_SnapshotsAreCopies(t *testing.T) {
	s := New()
	if s.Snapshot() != nil {
		t.Fatal("empty store must snapshot nil")
	}
	s.Begin(1)
	s.Upsert(act(wire.ActionScale, "pool-a", wire.StatusPending, 1))
	snap := s.Snapshot()
	snap[0].Status = wire.StatusFailed
	s.Upsert(act(wire.ActionScale, "pool-b", wire.StatusPending, 1))
	if got := s.Snapshot(); got[0].Status != wire.StatusPending {
		t.Fatalf("writing to a snapshot changed the store: %+v", got)
	}
	if len(snap) != 1 {
		t.Fatalf("a later upsert changed an earlier snapshot: %+v", snap)
	}
}

func TestStore_PruneKeepsDoneAndOtherTypesAndReportsOnlyRemovals(t *testing.T) {
	s := counted()
	s.Begin(2)
	s.Upsert(act(wire.ActionHeal, "node-done", wire.StatusDone, 2))
	s.Upsert(act(wire.ActionHeal, "node-pending", wire.StatusPending, 2))
	s.Upsert(act(wire.ActionHeal, "node-failed", wire.StatusFailed, 2))
	s.Upsert(act(wire.ActionHeal, "node-kept", wire.StatusPending, 2))
	s.Upsert(act(wire.ActionScale, "node-pending", wire.StatusPending, 2))
	s.n = 0
	if !s.Prune(wire.ActionHeal, map[string]bool{"node-kept": true}) {
		t.Fatal("prune that removed entries reported no change")
	}
	want := []wire.Action{
		act(wire.ActionHeal, "node-done", wire.StatusDone, 2),
		act(wire.ActionHeal, "node-kept", wire.StatusPending, 2),
		act(wire.ActionScale, "node-pending", wire.StatusPending, 2),
	}
	if got := s.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot = %+v, want %+v", got, want)
	}
	if s.Prune(wire.ActionHeal, map[string]bool{"node-kept": true}) {
		t.Fatal("prune that removed nothing reported a change")
	}
	if s.Prune(wire.ActionUpgrade, nil) {
		t.Fatal("prune of an absent type reported a change")
	}
	if s.n != 1 {
		t.Fatalf("changes reported = %d, want 1", s.n)
	}
}

// A revision that stands while the cluster keeps healing adds a done
// report per healed Machine: Prune keeps the 20 that changed most recently
// (what the wire could ever carry of them) and the reports it was told to
// keep, and drops the older done ones. At 20 nothing goes (the control).
func TestStore_PruneKeepsTheTwentyNewestDoneReports(t *testing.T) {
	s := New()
	s.Begin(2)
	s.Upsert(act(wire.ActionHeal, "kept", wire.StatusPending, 2))
	for i := range 20 {
		s.Upsert(act(wire.ActionHeal, fmt.Sprintf("m%02d", i), wire.StatusDone, 2))
	}
	if s.Prune(wire.ActionHeal, map[string]bool{"kept": true}) || len(s.Snapshot()) != 21 {
		t.Fatalf("control: 20 done reports pruned to %d entries", len(s.Snapshot()))
	}
	for i := 20; i < 25; i++ {
		s.Upsert(act(wire.ActionHeal, fmt.Sprintf("m%02d", i), wire.StatusDone, 2))
	}
	s.Upsert(act(wire.ActionHeal, "m00", wire.StatusDone, 3)) // changed again: newest
	if !s.Prune(wire.ActionHeal, map[string]bool{"kept": true}) {
		t.Fatal("a prune that dropped old done reports reported no change")
	}
	var got []string
	for _, a := range s.Snapshot() {
		got = append(got, a.Target)
	}
	want := []string{"kept", "m00", "m06", "m07", "m08", "m09", "m10", "m11", "m12", "m13", "m14", "m15",
		"m16", "m17", "m18", "m19", "m20", "m21", "m22", "m23", "m24"}
	if !slices.Equal(got, want) {
		t.Errorf("after the prune the store holds %v, want %v", got, want)
	}
}

func TestStore_SafeUnderConcurrentUse(t *testing.T) {
	var changes atomic.Int64
	s := New()
	s.Begin(1)
	var wg sync.WaitGroup
	targets := []string{"a", "b", "c", "d"}
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				target := targets[(w+i)%len(targets)]
				if s.Upsert(act(wire.ActionScale, target, []string{wire.StatusPending, wire.StatusDone}[i%2], 1)) {
					changes.Add(1)
				}
				s.Prune(wire.ActionHeal, map[string]bool{"a": true})
				s.Upsert(act(wire.ActionHeal, target, wire.StatusPending, 1))
				if i%50 == 0 {
					s.ClearType(wire.ActionHeal)
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				snap := s.Snapshot()
				seen := map[key]bool{}
				for _, a := range snap {
					k := key{a.Type, a.Target}
					if seen[k] {
						t.Errorf("duplicate key %v in snapshot", k)
						return
					}
					seen[k] = true
				}
			}
		})
	}
	wg.Wait()
	got := s.Snapshot()
	scale := 0
	for _, a := range got {
		if a.Type == wire.ActionScale {
			scale++
		}
	}
	if scale != len(targets) {
		t.Fatalf("scale entries = %d, want %d: %+v", scale, len(targets), got)
	}
	if changes.Load() == 0 {
		t.Fatal("no change reported under concurrent writes")
	}
}

// docs/contract.md#g-3: with more reports than the wire carries, the ones that
// changed last win, in store order; a repeat that changed nothing does not
// count.
func TestStore_NewestKeepsTheLatestChangesInStoreOrder(t *testing.T) {
	s := filled(25, wire.ActionHeal, "m", wire.StatusPending)
	// m-00 changes last; m-01 is repeated unchanged and stays old.
	s.Upsert(wire.Action{Type: wire.ActionHeal, Target: "m-00", Status: wire.StatusDone, Revision: 3})
	s.Upsert(wire.Action{Type: wire.ActionHeal, Target: "m-01", Status: wire.StatusPending, Revision: 3})
	got := s.Newest(20, all)
	var targets []string
	for _, a := range got {
		targets = append(targets, a.Target)
	}
	want := []string{"m-00"}
	for i := 6; i < 25; i++ {
		want = append(want, fmt.Sprintf("m-%02d", i))
	}
	if !slices.Equal(targets, want) {
		t.Errorf("Newest(20) = %v\nwant %v", targets, want)
	}
	if got[0].Status != wire.StatusDone {
		t.Errorf("m-00 is %s, want its latest state, done", got[0].Status)
	}
	if n := len(s.Newest(30, all)); n != 25 {
		t.Errorf("Newest(30) gave %d entries, want all 25", n)
	}
	s.Prune(wire.ActionHeal, map[string]bool{"m-00": true})
	if got := s.Newest(20, all); len(got) != 1 || got[0].Target != "m-00" {
		t.Errorf("after prune Newest = %+v, want only the done m-00", got)
	}
}

// filled is a store at revision 3 holding n reports of typ, with targets
// prefix-00 onwards, changed in that order.
func filled(n int, typ, prefix, status string) *Store {
	s := New()
	s.Begin(3)
	for i := range n {
		s.Upsert(wire.Action{Type: typ, Target: fmt.Sprintf("%s-%02d", prefix, i), Status: status, Revision: 3})
	}
	return s
}

// all sends every entry.
func all(wire.Action) bool { return true }

// An entry the wire would drop (here, one with no target) must not take the
// place of an older one it would carry.
func TestStore_NewestSkipsWhatTheWireWouldDrop(t *testing.T) {
	s := filled(20, wire.ActionScale, "p", wire.StatusDone)
	s.Upsert(wire.Action{Type: wire.ActionScale, Target: "", Status: wire.StatusFailed, Revision: 3})
	got := s.Newest(20, func(a wire.Action) bool { return a.Target != "" })
	if len(got) != 20 || got[0].Target != "p-00" {
		t.Errorf("Newest = %d entries starting %+v; want the 20 with a target", len(got), got[0])
	}
	if got := s.Newest(20, func(wire.Action) bool { return false }); got != nil {
		t.Errorf("Newest of none sendable = %+v, want nil", got)
	}
}
