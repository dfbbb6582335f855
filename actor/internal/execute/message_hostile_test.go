package execute

import (
	"strings"
	"testing"
	"unicode"

	"kubehz.dev/agent/shared/wire"
)

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
