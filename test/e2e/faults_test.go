package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"kubehz.dev/agent/test/platformsim"
)

// heartbeatsAfter lists heartbeat requests (accepted or not) after seq.
func heartbeatsAfter(sim *platformsim.Server, seq uint64) []platformsim.Request {
	var out []platformsim.Request
	for _, r := range sim.Requests() {
		if r.Seq > seq && r.Endpoint == platformsim.EndpointHeartbeat {
			out = append(out, r)
		}
	}
	return out
}

// churn keeps changing the cluster until stop is closed, so the observer
// always has a newer payload that would like to go out at once.
func churn(t *testing.T, prefix string, every time.Duration) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	finished := make(chan struct{})
	createNode(t, nodeSpec{name: prefix, ready: corev1.ConditionTrue})
	go func() {
		defer close(finished)
		status := corev1.ConditionFalse
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				setNodeReadyQuiet(prefix, status)
				if status == corev1.ConditionFalse {
					status = corev1.ConditionTrue
				} else {
					status = corev1.ConditionFalse
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// A 401 waits the full backoff (README, Delivery: exponential with full
// jitter, 1 s up to 5 min), however often the cluster changes. The gaps are
// read off the simulator's own arrival stamps: each retry's timer starts
// after the previous answer came back, so a gap is never below the wait,
// and 1 s is checked with no margin. Full jitter draws the k-th wait
// (counting from 0) from max(1 s, U·2^k s): a fixed 1 s retry never leaves
// a gap of 3 s, a growing backoff does. Nine attempts that never waited
// 3 s happen to a true backoff with a probability below 1e-5 (the product
// of P(U·2^k < 3) for k = 2..7).
func TestObserver_AuthFailureBacksOffInFull(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim)
	waitBeat(t, sim, nil)

	seq := sim.Seq()
	sim.SetFault(platformsim.Fault{Endpoint: platformsim.EndpointHeartbeat, Status: http.StatusUnauthorized})
	// With a change every 150 ms and a 500 ms min-gap, a backoff shortened
	// by new payloads would retry about twice a second.
	stop := churn(t, "auth-churn", 150*time.Millisecond)
	var reqs []platformsim.Request
	grew := func() bool {
		reqs = heartbeatsAfter(sim, seq)
		for i := 1; i < len(reqs); i++ {
			if reqs[i].Time.Sub(reqs[i-1].Time) >= 3*time.Second {
				return true
			}
		}
		return len(reqs) >= 9
	}
	waitFor(t, "a retry 3 s after the one before it, or nine attempts", 90*time.Second, grew)
	stop()
	sim.ClearFault()

	longest := time.Duration(0)
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].Time.Sub(reqs[i-1].Time)
		if gap < time.Second {
			t.Errorf("attempt %d came %s after the previous 401; the auth backoff was shortened below its 1 s base", i, gap)
		}
		longest = max(longest, gap)
	}
	if longest < 3*time.Second {
		t.Errorf("%d attempts after 401s, the longest gap %s: the retry does not grow", len(reqs), longest)
	}
	t.Logf("%d attempts after 401s, the longest gap %s", len(reqs), longest.Truncate(time.Millisecond))
	// Recovery: the next beat is accepted and carries the newest snapshot. It
	// comes after the wait drawn on the last 401, which after n failures may
	// be up to 2^n s (at most the 5 min ceiling), so the window allows that
	// much beside the usual one.
	failures := len(heartbeatsAfter(sim, seq))
	pending := 5 * time.Minute
	if failures < 9 {
		pending = min(time.Second<<failures, pending)
	}
	waitBeatWithin(t, sim, pending+beatWait, after(sim.Seq(), nil))
}

func TestObserver_RetryAfterIsHonoured(t *testing.T) {
	for _, tc := range []struct {
		name string
		// header renders Retry-After; notBefore says, from the 429's time and
		// the header's own anchor, the earliest instant a retry may come.
		header    func(anchor time.Time) string
		notBefore func(faulted, anchor time.Time) time.Time
	}{
		{"seconds",
			func(time.Time) string { return "3" },
			func(faulted, _ time.Time) time.Time { return faulted.Add(3 * time.Second) }},
		{"http date",
			platformsim.RetryAfterAt,
			// The date has whole-second resolution; it names that second.
			func(_, anchor time.Time) time.Time { return anchor.Truncate(time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := startSim(t, platformsim.Options{})
			startObserver(t, sim)
			waitBeat(t, sim, nil)

			seq := sim.Seq()
			anchor := time.Now().Add(4 * time.Second)
			sim.SetFault(platformsim.Fault{Endpoint: platformsim.EndpointHeartbeat, Status: http.StatusTooManyRequests,
				RetryAfter: tc.header(anchor), Count: 1})
			stop := churn(t, "retry-after-"+strings.ReplaceAll(tc.name, " ", "-"), 150*time.Millisecond)
			defer stop()
			next := waitBeat(t, sim, after(seq, nil))
			reqs := heartbeatsAfter(sim, seq)
			if len(reqs) < 2 || reqs[0].Status != http.StatusTooManyRequests {
				t.Fatalf("expected a 429 then an accepted beat, got %d requests", len(reqs))
			}
			// 50 ms of slack for the two clocks' reading order, nothing more.
			if earliest := tc.notBefore(reqs[0].Time, anchor); next.Time.Before(earliest.Add(-50 * time.Millisecond)) {
				t.Errorf("retried at %s, before %s as Retry-After asked", next.Time.Format(time.StampMilli), earliest.Format(time.StampMilli))
			}
		})
	}
}

func TestObserver_RedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	var sawToken atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), "khz_agt_") {
			sawToken.Store(true)
		}
	}))
	defer other.Close()

	sim := startSim(t, platformsim.Options{})
	sim.SetFault(platformsim.Fault{Endpoint: platformsim.EndpointHeartbeat, Status: http.StatusTemporaryRedirect,
		Location: other.URL + "/api/clusters/" + clusterID + "/heartbeat"})
	p, _ := startObserver(t, sim)

	ctx, cancel := context.WithTimeout(context.Background(), beatWait)
	defer cancel()
	for n := 0; n < 2; n++ { // the first attempt and at least one retry
		seq := sim.Seq()
		if _, err := sim.WaitRequest(ctx, func(r platformsim.Request) bool {
			return r.Seq > seq && r.Status == http.StatusTemporaryRedirect
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := elsewhere.Load(); n != 0 || sawToken.Load() {
		t.Fatalf("the redirect target got %d requests (token seen: %v); redirects must never be followed", n, sawToken.Load())
	}
	if !strings.Contains(p.Output(), "redirect") {
		t.Errorf("the observer's log does not say it refused a redirect")
	}
	sim.ClearFault()
	waitBeat(t, sim, nil)
}
