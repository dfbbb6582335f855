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
