package beat

import (
	"strings"
	"testing"
	"testing/synctest"

	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/wire"
)

func verdict(name string) platform.Verdict {
	return platform.Verdict{Present: true, Updates: []wire.AvailableUpdate{{Name: name}}}
}

func TestSender_SlowVerdictConsumerDoesNotDelaySends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var delivered []string
		gate := make(chan struct{})
		h := start(t, func(v platform.Verdict) {
			delivered = append(delivered, v.Updates[0].Name)
			<-gate
		})

		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{verdict: verdict("v1")}
		synctest.Wait()
		// The consumer now sits on v1; beats still flow, and only the newest
		// verdict waits for it.
		for _, r := range []reply{{verdict: verdict("v2")}, {verdict: verdict("v3")}, {}} {
			h.sender.Enqueue([]byte("b"))
			h.next().reply <- r
		}
		synctest.Wait()
		close(gate)
		synctest.Wait()
		h.run.Stop()

		if got := strings.Join(delivered, ","); got != "v1,v3" {
			t.Errorf("delivered %s, want v1,v3", got)
		}
	})
}

func TestSender_RunWaitsForVerdictInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		h := start(t, func(platform.Verdict) { <-gate })
		h.sender.Enqueue([]byte("b1"))
		h.next().reply <- reply{verdict: verdict("v1")}
		synctest.Wait()

		h.run.Cancel()
		synctest.Wait()
		if h.run.Returned() {
			t.Fatal("Run returned while onVerdict was still running")
		}
		close(gate)
		h.run.Stop()
	})
}
