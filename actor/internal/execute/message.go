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
