package execute

import (
	"fmt"
	"unicode/utf8"

	"kubehz.dev/agent/shared/printable"
	"kubehz.dev/agent/shared/wire"
)

// maxEventMessage bounds an Event's message, in bytes: events.k8s.io caps a
// note at 1 KiB, and a longer core Event only bloats etcd.
const maxEventMessage = 1024

// eventMessage is the Event text for one report, at most maxEventMessage
// bytes, cut on a character boundary with "..." appended when it is longer.
// The detail may carry outside text (a target version, a MachineDeployment
// field) to `kubectl describe`: it is escaped before the cut, so the escapes
// count against the bound.
func eventMessage(a wire.Action) string {
	msg := fmt.Sprintf("desired revision %d: %s %s: %s", a.Revision, a.Type, a.Status, a.Detail)
	return cutBytes(printable.String(msg), maxEventMessage)
}

// cutBytes returns s when it fits in max bytes, else its longest prefix that
// ends on a UTF-8 character boundary and leaves room for "...", plus "...".
func cutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max - len("...")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "..."
}

// news reports whether a is worth an Event: an outcome other than the last
// one recorded for its type and target this term, the revision aside. A new
// revision makes every report new to the store, and a platform that bumps
// the revision on every poll would otherwise have each unchanged outcome
// (a pool's, a refused or failed heal's, a storm's) recorded again every
// minute. What it keeps is bounded: MachineDeployment targets by the
// cluster, heal targets by the reports the store keeps (forgetEvents).
func (e *Executor) news(a wire.Action) bool {
	k := a.Type + "/" + a.Target
	prev, seen := e.evented[k]
	cur := a
	prev.Revision, cur.Revision = 0, 0
	if seen && prev == cur {
		return false
	}
	if e.evented == nil {
		e.evented = map[string]wire.Action{}
	}
	e.evented[k] = a
	return true
}

// forgetEvents drops what news keeps of typ's targets that keep does not
// hold (all of typ's when keep is nil): an outcome that left the store is
// news again if it comes back.
func (e *Executor) forgetEvents(typ string, keep map[string]wire.Action) {
	for k, a := range e.evented {
		if _, ok := keep[a.Target]; a.Type == typ && !ok {
			delete(e.evented, k)
		}
	}
}

// withdraw drops typ's reports, for a capability the document no longer
// authorizes, and what news keeps of them.
func (e *Executor) withdraw(typ string) {
	e.Store.ClearType(typ)
	e.forgetEvents(typ, nil)
}

// withdrawAll is withdraw for every capability, once nothing is authorized:
// it also stops every cache. It reports whether any report was dropped.
func (e *Executor) withdrawAll() bool {
	e.stopCaches(false, false, false)
	e.evented = nil
	return e.Store.Clear()
}
