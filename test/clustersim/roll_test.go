package clustersim

import (
	"reflect"
	"testing"
	"time"
)

func TestDecide_ScalesAndRollsWithOneSurge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	oldReady := func(name string, s int) member { return member{name: name, created: at(s), ready: true} }
	oldDown := func(name string, s int) member { return member{name: name, created: at(s)} }
	newReady := func(name string, s int) member { return member{name: name, created: at(s), current: true, ready: true} }
	newJoining := func(name string, s int) member { return member{name: name, created: at(s), current: true} }

	for _, tc := range []struct {
		name    string
		want    int
		members []member
		change  change
	}{
		{"steady pool does nothing", 2, []member{newReady("a", 1), newReady("b", 2)}, change{}},
		{"scale up creates the difference", 3, []member{newReady("a", 1)}, change{create: 2}},
		{"scale up is capped per pass", 50, nil, change{create: maxChangesPerPass}},
		{"scale down deletes the newest", 1, []member{newReady("a", 1), newReady("c", 3), newReady("b", 2)}, change{remove: []string{"c", "b"}}},
		{"scale down breaks a creation tie by name", 1, []member{newReady("a", 1), newReady("b", 1)}, change{remove: []string{"b"}}},
		{"kubelet change surges one", 2, []member{oldReady("a", 1), oldReady("b", 2)}, change{create: 1, roll: true}},
		{"surge not yet Ready waits", 2, []member{oldReady("a", 1), oldReady("b", 2), newJoining("c", 3)}, change{}},
		{"surge Ready replaces the oldest old", 2, []member{oldReady("b", 2), oldReady("a", 1), newReady("c", 3)}, change{remove: []string{"a"}, roll: true}},
		{"old creation tie goes by name", 2, []member{oldReady("b", 1), oldReady("a", 1), newReady("c", 3)}, change{remove: []string{"a"}, roll: true}},
		{"old not Ready goes before older Ready", 2, []member{oldReady("a", 1), oldDown("b", 2), newReady("c", 3)}, change{remove: []string{"b"}, roll: true}},
		{"an earlier new Machine gone NotReady holds the roll", 2, []member{oldReady("a", 1), newJoining("c", 3), newReady("d", 4)}, change{}},
		{"last old Machine replaced", 2, []member{oldReady("b", 2), newReady("c", 3), newReady("d", 4)}, change{remove: []string{"b"}, roll: true}},
		{"rolled pool is steady", 2, []member{newReady("c", 3), newReady("d", 4)}, change{}},
		{"scale up mid-roll comes first", 3, []member{oldReady("a", 1), newJoining("c", 3)}, change{create: 1}},
		{"scale down mid-roll keeps the surge and drops old", 1, []member{oldReady("a", 1), oldReady("b", 2), newJoining("c", 3)}, change{remove: []string{"a"}}},
		{"scale down past the old ones drops the newest new", 1, []member{oldReady("a", 1), newReady("c", 3), newJoining("d", 4), newJoining("e", 5)}, change{remove: []string{"a", "e"}}},
		{"scale down to want+1 then rolls by availability", 1, []member{oldReady("a", 1), oldReady("b", 2)}, change{remove: []string{"a"}, roll: true}},
		{"scale to zero mid-roll deletes old at want+1", 0, []member{oldReady("a", 1)}, change{remove: []string{"a"}, roll: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.want, tc.members); !reflect.DeepEqual(got, tc.change) {
				t.Errorf("decide(%d) = %+v, want %+v", tc.want, got, tc.change)
			}
		})
	}
}
