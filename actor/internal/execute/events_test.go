package execute

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"kubehz.dev/agent/shared/wire"
)

func TestEventMessage_LongDetailIsCutOnACharacterBoundaryWithin1024Bytes(t *testing.T) {
	for _, pad := range []int{0, 1, 2, 3} { // every offset of a 4-byte character against the cut
		a := wire.Action{Type: "scale", Status: "failed", Revision: 7, Detail: strings.Repeat("x", pad) + strings.Repeat("😀", 400)}
		msg := eventMessage(a)
		if len(msg) > 1024 {
			t.Errorf("pad %d: %d bytes, want at most 1024", pad, len(msg))
		}
		if !utf8.ValidString(msg) {
			t.Errorf("pad %d: the cut split a character: %q", pad, msg[len(msg)-8:])
		}
		if !strings.HasSuffix(msg, "...") || !strings.HasPrefix(msg, "desired revision 7: scale failed: ") {
			t.Errorf("pad %d: message %q… lacks its prefix or the ... mark", pad, msg[:40])
		}
		if len(msg) < 1024-6 {
			t.Errorf("pad %d: cut to %d bytes, more than one character short of 1024", pad, len(msg))
		}
	}
}

func TestEventMessage_ShortDetailIsKeptWhole(t *testing.T) {
	a := wire.Action{Type: "scale", Status: "done", Revision: 3, Detail: "already at 2 replicas"}
	if got, want := eventMessage(a), "desired revision 3: scale done: already at 2 replicas"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEventMessage_HostileDetailIsEscapedThenCut: a detail carries outside
// text (a target version, a MachineDeployment field) into `kubectl
// describe`; escaped first, the message still fits 1024 bytes.
func TestEventMessage_HostileDetailIsEscapedThenCut(t *testing.T) {
	const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\nWarning  KubehzScaled  forged"
	a := wire.Action{Type: "upgrade", Status: "failed", Revision: 9, Detail: "target " + hostile}
	want := `desired revision 9: upgrade failed: target v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\nWarning  KubehzScaled  forged`
	if got := eventMessage(a); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	a.Detail = strings.Repeat("\x1b", 1024) // 4 bytes each once escaped
	msg := eventMessage(a)
	if len(msg) > 1024 || !strings.HasSuffix(msg, "...") {
		t.Errorf("escaped message is %d bytes, want at most 1024 ending in ...", len(msg))
	}
	for _, r := range msg {
		if !unicode.IsPrint(r) {
			t.Fatalf("message holds %U", r)
		}
	}
}

func TestNews_IsAnOutcomeOtherThanTheLastOneForItsTargetTheRevisionAside(t *testing.T) {
	var e Executor
	pool := wire.Action{Type: wire.ActionScale, Target: "pool-a", Status: wire.StatusDone, Detail: "already at 3 replicas", Revision: 7}
	heal := wire.Action{Type: wire.ActionHeal, Target: "m1", Status: wire.StatusFailed, Detail: "refusing", Revision: 7}
	for _, a := range []wire.Action{pool, heal} {
		if !e.news(a) {
			t.Errorf("%s/%s: the first outcome is not news", a.Type, a.Target)
		}
		again := a
		again.Revision = 8
		if e.news(again) {
			t.Errorf("%s/%s: the same outcome at another revision is news", a.Type, a.Target)
		}
	}

	// Forgetting heal targets leaves the pools' outcomes alone.
	e.forgetEvents(wire.ActionHeal, map[string]wire.Action{})
	if e.news(pool) {
		t.Error("forgetting heal targets forgot a pool's outcome")
	}
	if !e.news(heal) {
		t.Error("a heal outcome whose report left the store is not news again")
	}

	// What it keeps is what the store keeps.
	for i := range 100 {
		e.news(wire.Action{Type: wire.ActionHeal, Target: "machine-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)), Detail: "refusing"})
	}
	e.forgetEvents(wire.ActionHeal, map[string]wire.Action{"m1": heal})
	if len(e.evented) != 2 {
		t.Errorf("news keeps %d outcomes, want the pool's and m1's", len(e.evented))
	}
	e.forgetEvents(wire.ActionHeal, nil)
	if len(e.evented) != 1 {
		t.Errorf("news keeps %d outcomes after forgetting every heal target, want the pool's", len(e.evented))
	}
}
