package e2e

import (
	"context"
	"strings"
	"testing"

	"kubehz.dev/agent/test/platformsim"
)

// TestObserver_PicksUpRotatedToken rotates the agent token the way a Secret
// update does, with no restart: first while the old one still works (the
// file change alone must be noticed), then with the old one revoked before
// the file changes, so beats get 401s until the rotated file is read. That
// a 401 alone forces a re-read is pinned by the token package's unit tests.
func TestObserver_PicksUpRotatedToken(t *testing.T) {
	second := "khz_agt_" + strings.Repeat("b", 64)
	third := "khz_agt_" + strings.Repeat("c", 64)

	sim := startSim(t, platformsim.Options{})
	_, tokenFile := startObserver(t, sim)
	waitBeat(t, sim, nil)

	sim.SetTokens(platformsim.DefaultToken, second)
	seq := sim.Seq()
	writeToken(t, tokenFile, second)
	createNode(t, nodeSpec{name: "rotate-1"})
	b := waitBeat(t, sim, after(seq, func(p payload) bool { _, ok := p.node("rotate-1"); return ok }))
	if b.Token != second {
		t.Errorf("beat after the file changed still used the old token")
	}

	sim.SetTokens(third) // the platform revokes the current token first
	seq = sim.Seq()
	createNode(t, nodeSpec{name: "rotate-2"})
	ctx, cancel := context.WithTimeout(context.Background(), beatWait)
	defer cancel()
	if _, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool { return r.Seq > seq && r.Status == 401 }); err != nil {
		t.Fatalf("no 401 after the revocation: %v", err)
	}
	writeToken(t, tokenFile, third)
	b = waitBeat(t, sim, after(seq, nil))
	if b.Token != third {
		t.Errorf("accepted beat did not carry the rotated token")
	}
}
