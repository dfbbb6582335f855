package report_test

import (
	"reflect"
	"testing"
	"unicode"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// TestEncode_ShowsNoRuneATerminalWouldObeyAndRoundTrips: the ConfigMap is
// read by people too (`kubectl describe configmap kubehz-actions`), and
// json.Encoder writes a C1 CSI or a bidi override raw. Written as \u escapes
// they decode to the very same reports.
func TestEncode_ShowsNoRuneATerminalWouldObeyAndRoundTrips(t *testing.T) {
	const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\u2066\U000E0041"
	d := report.Document{Revision: 3, Holder: "actor-a" + hostile, UpdatedAt: at, Actions: []wire.Action{{
		Type: wire.ActionUpgrade, Target: "pool" + hostile, Status: wire.StatusFailed, Detail: "target " + hostile, Revision: 3,
	}}}
	s, err := report.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			t.Fatalf("the ConfigMap text holds %U:\n%q", r, s)
		}
	}
	if got, problems := report.Decode(s); problems != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("decodes to %+v (problems %v), want %+v", got, problems, d)
	}
}
