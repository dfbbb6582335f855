package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"kubehz.dev/agent/test/platformsim"
)

// TestObserver_SurvivesPlatformOutageAndSendsTheNewestSnapshot takes the
// platform away entirely (connection refused), changes the cluster many
// times meanwhile, and brings it back on the same address: the observer
// must still run, its first accepted beat must be the newest snapshot, and
// no older one may follow it. That the observer keeps only one pending
// payload is TestSender_KeepsOnlyLatestPayload's to prove: the few KiB the
// outage's payloads weigh are far below what RSS can show here.
func TestObserver_SurvivesPlatformOutageAndSendsTheNewestSnapshot(t *testing.T) {
	sim := platformsim.New(platformsim.Options{})
	url, err := sim.Start()
	if err != nil {
		t.Fatal(err)
	}
	addr := url[len("http://"):]
	p, _ := startObserver(t, sim)
	waitBeat(t, sim, nil)
	before, err := p.RSS()
	if err != nil {
		t.Fatal(err)
	}

	sim.Close()
	outageStart := time.Now()
	outputAtStart := len(p.Output())
	stop := churn(t, "outage-churn", 50*time.Millisecond)
	for i := range 40 {
		createPod(t, "default", fmt.Sprintf("outage-%d", i), corev1.PodRunning)
	}
	time.Sleep(10 * time.Second)
	stop()
	queued := strings.Count(p.Output(), `"msg":"Heartbeat queued"`)
	createNode(t, nodeSpec{name: "outage-last", ready: corev1.ConditionTrue})
	// Wait until the observer has queued a payload built after the last
	// change, so the first accepted beat must be that one, not an older one.
	for deadline := time.Now().Add(beatWait); strings.Count(p.Output(), `"msg":"Heartbeat queued"`) == queued; {
		if time.Now().After(deadline) {
			t.Fatal("no payload queued after the last change")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A change signal still in flight may follow that payload; one debounce
	// plus one min-gap later nothing newer can be pending.
	time.Sleep(1500 * time.Millisecond)
	if p.Exited() {
		t.Fatal("observer exited during the platform outage")
	}
	during, err := p.RSS()
	if err != nil {
		t.Fatal(err)
	}

	back := startSim(t, platformsim.Options{Listen: addr})
	b := waitBeat(t, back, nil)
	got := decode(b)
	if _, ok := got.node("outage-last"); !ok {
		t.Errorf("first beat after the outage lacks the newest node; a stale payload was sent")
	}
	ts, err := time.Parse(time.RFC3339, got.Timestamp)
	if err != nil || ts.Before(outageStart) {
		t.Errorf("first beat after the outage was built at %s, before the outage began", got.Timestamp)
	}
	// No payload kept from the outage goes out after the newest: the next
	// beat was built after the first.
	second := decode(waitBeat(t, back, after(b.Seq, nil)))
	if ts2, err := time.Parse(time.RFC3339, second.Timestamp); err != nil || ts2.Before(ts) {
		t.Errorf("the beat after the first was built at %s, before the first (%s): a payload from the outage was kept", second.Timestamp, got.Timestamp)
	}
	// A coarse bound on growth, not a measure of retained payloads: the
	// binary runs under the race detector, whose shadow memory moves RSS by
	// a few MiB on its own, while every payload built during the outage
	// together weighs the KiB logged below.
	built, bytes := queuedPayloads(p.Output()[outputAtStart:])
	t.Logf("observer RSS: %d KiB before the outage, %d KiB after 10 s of it; %d payloads built meanwhile, %d KiB in all",
		before>>10, during>>10, built, bytes>>10)
	if during > before+16<<20 {
		t.Errorf("RSS grew by more than 16 MiB during the outage: from %d KiB to %d KiB", before>>10, during>>10)
	}
}

// queuedPayloads counts the observer's "Heartbeat queued" log records in out
// and sums the payload bytes they name.
func queuedPayloads(out string) (n, bytes int) {
	for line := range strings.Lines(out) {
		var rec struct {
			Msg   string `json:"msg"`
			Bytes int    `json:"bytes"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "Heartbeat queued" {
			n++
			bytes += rec.Bytes
		}
	}
	return n, bytes
}
