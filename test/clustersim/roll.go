package clustersim

import (
	"sort"
	"time"
)

// member is what the pool decision reads of one non-deleting Machine.
type member struct {
	name    string
	created time.Time // the simulator's nanosecond record where it has one
	current bool      // runs the template's kubelet
	ready   bool      // joined, and its Node is Ready
}

// change is one pass's work on a pool: Machines to create, at the
// template's kubelet, and Machines to delete, by name.
type change struct {
	create int
	remove []string
	roll   bool // the change replaces old-kubelet Machines rather than scaling
}

// decide keeps want Machines and rolls old-kubelet ones out as a
// MachineDeployment with maxSurge 1 and maxUnavailable 0 does: at most
// want+1 Machines, one surge created at a time, and an old one deleted
// only when every new one is Ready and the Ready count stays at want or
// above. Scaling always wins over rolling, and scale-downs pick old
// Machines first, so the two never undo each other's work.
func decide(want int, members []member) change {
	var old, current []member
	for _, m := range members {
		if m.current {
			current = append(current, m)
		} else {
			old = append(old, m)
		}
	}
	total := len(members)
	switch {
	case total < want:
		return change{create: min(want-total, maxChangesPerPass)}
	case len(old) == 0 && total > want:
		return change{remove: names(newestFirst(current)[:min(total-want, maxChangesPerPass)])}
	case len(old) == 0:
		return change{}
	case total == want:
		return change{create: 1, roll: true} // the surge
	case total > want+1:
		// Scaled down mid-roll: down to one surge, old Machines first.
		order := append(oldestFirst(old), newestFirst(current)...)
		return change{remove: names(order[:min(total-want-1, maxChangesPerPass)])}
	}
	// want+1 Machines, some old: the surge is in place.
	ready := 0
	for _, m := range members {
		if m.ready {
			ready++
		}
	}
	for _, m := range current {
		if !m.ready {
			return change{} // a new Machine has not joined Ready yet
		}
	}
	victim := oldestFirst(old)[0]
	if victim.ready && ready-1 < want {
		return change{}
	}
	return change{remove: []string{victim.name}, roll: true}
}

// oldestFirst orders old Machines for replacement: those not Ready first,
// since deleting them costs no capacity, then the oldest, then by name.
func oldestFirst(ms []member) []member {
	out := append([]member(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.ready != b.ready:
			return !a.ready
		case !a.created.Equal(b.created):
			return a.created.Before(b.created)
		}
		return a.name < b.name
	})
	return out
}

// newestFirst orders Machines for a scale-down: the newest goes first, the
// name breaking ties.
func newestFirst(ms []member) []member {
	out := append([]member(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.After(out[j].created)
		}
		return out[i].name > out[j].name
	})
	return out
}

func names(ms []member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.name
	}
	return out
}
