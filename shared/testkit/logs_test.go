package testkit

import "testing"

func TestLogs_CountsLinesHoldingEveryPart(t *testing.T) {
	var l Logs
	l.Logger().Info("Lease lapsed", "holder", "a")
	l.Logger().Info("Lease lapsed", "holder", "b")
	l.Logger().Debug("Lease lapsed", "holder", "a")
	if n := l.Count("Lease lapsed"); n != 2 {
		t.Errorf("Count(msg) = %d, want 2: Debug is below the binaries' level", n)
	}
	if n := l.Count("Lease lapsed", `"holder":"a"`); n != 1 {
		t.Errorf("Count(msg, holder a) = %d, want 1", n)
	}
}
