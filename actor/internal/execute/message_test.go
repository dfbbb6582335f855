package execute

import (
	"strings"
	"testing"
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
