package actions

import (
	"slices"
	"time"

	"kubehz.dev/agent/shared/report"
)

// reevaluate folds the cached records at the clock's now and acts on what
// changed: notify when the folded list did, re-arm the expiry timer when the
// Lease's expiry did, and log new decode problems, a new holder mismatch and
// liveness flips. Handlers of both informers and the timer call it, so the
// reads and the comparison happen under one lock and a stale evaluation can
// never overwrite a fresher one.
func (w *Watcher) reevaluate() {
	w.mu.Lock()
	now := w.clk.Now()
	doc, problems := w.report()
	lease := w.lease()
	folded := Fold(doc, lease, now)
	changed := !slices.Equal(folded, w.last)
	w.last = folded

	live := lease != nil && lease.Live(now)
	flipped := live != w.live
	w.live = live
	expiry := lease.expiryIfLive(now)
	rearm := !expiry.Equal(w.expiry)
	w.expiry = expiry

	fresh := w.newProblems(problems)
	mismatched := w.newMismatch(doc, lease)
	w.mu.Unlock()

	for _, p := range fresh {
		// The reason is fixed text; the data itself is never logged.
		w.log.Warn("Dropped part of the actor's report", "problem", string(p.Reason), "count", p.Count)
	}
	if mismatched {
		w.log.Info("Report was written by another holder than the Lease's; withholding it until the leader publishes its own",
			"reportHolder", doc.Holder, "leaseHolder", lease.Holder)
	}
	if flipped && live {
		w.log.Info("Actor lease is live; its reports ride the beat", "holder", lease.Holder)
	} else if flipped {
		w.log.Info("Actor lease lapsed, was released or is gone; the beat drops its reports")
	}
	if rearm {
		select {
		case w.rearm <- struct{}{}:
		default:
		}
	}
	if changed && w.notify != nil {
		w.notify()
	}
}

// expiryIfLive is when a live Lease lapses; zero for none or a lapsed one.
func (l *Lease) expiryIfLive(now time.Time) time.Time {
	if l == nil || !l.Live(now) {
		return time.Time{}
	}
	return l.Expiry()
}

// newProblems returns the document's problems not logged yet and remembers
// the current set. A problem that persists across rewrites is logged once;
// one that goes away and comes back is news again. Called with mu held.
func (w *Watcher) newProblems(problems []report.Problem) []report.Problem {
	var fresh []report.Problem
	current := make(map[report.Reason]bool, len(problems))
	for _, p := range problems {
		current[p.Reason] = true
		if !w.problems[p.Reason] {
			fresh = append(fresh, p)
		}
	}
	w.problems = current
	return fresh
}

// newMismatch reports whether a holder mismatch is new: a different pair
// than the last one logged. Called with mu held.
func (w *Watcher) newMismatch(doc report.Document, lease *Lease) bool {
	if !Mismatch(doc, lease) {
		w.mismatch = holders{}
		return false
	}
	pair := holders{report: doc.Holder, lease: lease.Holder}
	if pair == w.mismatch {
		return false
	}
	w.mismatch = pair
	return true
}
