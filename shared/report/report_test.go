package report_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

func TestEncode_WritesTheAgreedShape(t *testing.T) {
	got, err := report.Encode(report.Document{
		Revision: 7, Holder: "actor-0_abc", UpdatedAt: at.In(time.FixedZone("CEST", 2*3600)).Add(900 * time.Millisecond),
		Actions: []wire.Action{
			{Type: "scale", Target: "pool-a", Status: "done", Detail: "replicas 2 to 3 <ok> & done", Revision: 7},
			{Type: "heal", Target: "wrk-b", Status: "pending", Revision: 7},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"revision":7,"holder":"actor-0_abc","updatedAt":"2026-07-06T12:00:00Z","actions":[` +
		`{"type":"scale","target":"pool-a","status":"done","detail":"replicas 2 to 3 <ok> & done","revision":7},` +
		`{"type":"heal","target":"wrk-b","status":"pending","revision":7}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestEncode_AppliesTheDecodeRules(t *testing.T) {
	long := strings.Repeat("é", 300)
	var actions []wire.Action
	for i := range 24 {
		actions = append(actions, scale(fmt.Sprintf("pool-%02d", i), "done"))
	}
	actions = append([]wire.Action{
		{Type: "restart", Target: "x", Status: "done"},
		{Type: "scale", Target: "", Status: "done"},
		{Type: "scale", Target: "pool-00", Status: "bogus"},
		{Type: "heal", Target: long, Status: "failed", Detail: long, Revision: -3},
	}, actions...)
	actions = append(actions, scale("pool-00", "failed")) // a duplicate, and over the cap anyway

	s, err := report.Encode(report.Document{Revision: 99_000_000, Holder: long, Actions: actions})
	if err != nil {
		t.Fatal(err)
	}
	got, problems := report.Decode(s)
	if problems != nil {
		t.Fatalf("Encode wrote what Decode refuses: %v", problems)
	}
	want := report.Document{Revision: 10_000_000, Holder: long[:2*253], Actions: append(
		[]wire.Action{{Type: "heal", Target: long[:2*253], Status: "failed", Detail: long[:2*256]}},
		actions[4:23]...)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if empty, _ := report.Encode(report.Document{}); empty != `{"revision":0,"holder":"","actions":[]}` {
		t.Fatalf("empty document encodes as %s", empty)
	}
}

// Every string at its cap and every character a six-byte \u00XX escape is
// the largest document Encode can produce; it must still fit.
func TestEncode_WorstCaseFitsSixtyFourKiB(t *testing.T) {
	esc := func(n int, tag rune) string { return string(tag) + strings.Repeat("\x01", n-1) }
	d := report.Document{Revision: 10_000_000, Holder: esc(253, 'h'), UpdatedAt: at}
	for i := range 20 {
		d.Actions = append(d.Actions, wire.Action{
			Type: wire.ActionUpgrade, Target: esc(253, rune('a'+i)), Status: wire.StatusInProgress,
			Detail: esc(256, 'd'), Revision: 10_000_000,
		})
	}
	s, err := report.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) > 64<<10 || len(s) < 60_000 {
		t.Fatalf("worst case is %d bytes; want just under 64 KiB", len(s))
	}
	if got, problems := report.Decode(s); problems != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("worst case does not round-trip: %v", problems)
	}
}

func TestEncode_RefusesYearsRFC3339CannotHold(t *testing.T) {
	if _, err := report.Encode(report.Document{UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("year 10000 encoded")
	}
}

// Sendable is what Encode keeps before the cut and the duplicate check.
func TestSendable_IsAKnownTypeAndStatusWithATarget(t *testing.T) {
	ok := wire.Action{Type: wire.ActionHeal, Target: "m1", Status: wire.StatusDone}
	for _, tc := range []struct {
		edit func(*wire.Action)
		want bool
	}{
		{func(*wire.Action) {}, true},
		{func(a *wire.Action) { a.Target = "" }, false},
		{func(a *wire.Action) { a.Type = "reboot" }, false},
		{func(a *wire.Action) { a.Status = "skipped" }, false},
	} {
		a := ok
		tc.edit(&a)
		if got := report.Sendable(a); got != tc.want {
			t.Errorf("Sendable(%+v) = %t, want %t", a, got, tc.want)
		}
		if doc, err := report.Encode(report.Document{Actions: []wire.Action{a}}); err != nil || strings.Contains(doc, `"status"`) != tc.want {
			t.Errorf("Encode of %+v = %s, %v; kept %t, want %t", a, doc, err, strings.Contains(doc, `"status"`), tc.want)
		}
	}
}
