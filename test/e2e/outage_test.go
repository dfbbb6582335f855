package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"kubehz.dev/agent/test/platformsim"
)

// TestObserver_SurvivesPlatformOutage takes the platform away entirely
// (connection refused), changes the cluster many times meanwhile, and brings
// it back on the same address: the observer must still run, must not have
// grown, and its first accepted beat must be the newest snapshot.
func TestObserver_SurvivesPlatformOutage(t *testing.T) {
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
	// One pending payload at most: memory must not track the outage's length
	// or the number of changes (about 40 payloads were built meanwhile). The
	// binary runs under the race detector, whose shadow memory moves RSS by a
	// few MiB on its own; retained payloads and pods would add far more.
	t.Logf("observer RSS: %d KiB before the outage, %d KiB after 10 s of it", before>>10, during>>10)
	if during > before+16<<20 {
		t.Errorf("RSS grew from %d KiB to %d KiB during the outage", before>>10, during>>10)
	}
}
