package report_test

import (
	"fmt"
	"strings"
	"time"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

var at = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

func scale(target, status string) wire.Action {
	return wire.Action{Type: wire.ActionScale, Target: target, Status: status, Revision: 7}
}

// entry is one action as JSON; fields are spliced raw so a test can send
// any shape.
func entry(typ, target, status string) string {
	return fmt.Sprintf(`{"type":%q,"target":%q,"status":%q,"revision":7}`, typ, target, status)
}

func doc(entries ...string) string {
	return `{"revision":7,"holder":"actor-0_abc","updatedAt":"2026-07-06T12:00:00Z","actions":[` +
		strings.Join(entries, ",") + `]}`
}

func withActions(actions ...wire.Action) report.Document {
	return report.Document{Revision: 7, Holder: "actor-0_abc", UpdatedAt: at, Actions: actions}
}
