package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

func setHeartbeatOwner(t *testing.T, value string) {
	t.Helper()
	cms := suite.env.Client.CoreV1().ConfigMaps("kubehz-system")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kubehz-agent-config"},
		Data:       map[string]string{"KUBEHZ_HEARTBEAT_OWNER": value},
	}
	if _, err := cms.Update(ctxT(t), cm, metav1.UpdateOptions{}); err != nil {
		if _, err := cms.Create(ctxT(t), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "kubehz-agent-config", metav1.DeleteOptions{}) })
}

// TestObserver_StandsDownWhileTheCronJobOwnsTheBeat flips the marker to
// cronjob and back: no beat may leave while the CronJob owns the heartbeat,
// though the cluster changes, and beats resume, carrying the change, once
// the observer owns it again. How soon they resume (one cadence) is pinned
// by TestLoop_StandsDownWhileNotOwnerAndResumesOnFlip on a fake clock.
func TestObserver_StandsDownWhileTheCronJobOwnsTheBeat(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	p, _ := startObserver(t, sim) // full interval 3 s, debounce 200 ms, min-gap 500 ms
	waitBeat(t, sim, nil)

	setHeartbeatOwner(t, "cronjob")
	kube.WaitUntil(t, "the observer says it stands down", func() bool { return strings.Contains(p.Output(), "standing down") })
	// A beat whose request was already on the wire may still land; it was
	// built before the observer stood down. Any beat built in a later
	// second was built while standing down.
	stoodDown := time.Now().UTC().Truncate(time.Second)
	seq := sim.Seq()
	createNode(t, nodeSpec{name: "owner-quiet", ready: corev1.ConditionTrue})
	// Several full intervals with a change to send.
	time.Sleep(10 * time.Second)
	for _, r := range heartbeatsAfter(sim, seq) {
		stamp, _ := r.Payload["timestamp"].(string)
		if built, err := time.Parse(time.RFC3339, stamp); err != nil || built.After(stoodDown) {
			t.Errorf("a heartbeat built at %q while KUBEHZ_HEARTBEAT_OWNER=cronjob (the observer stood down at %s)",
				stamp, stoodDown.Format(time.RFC3339))
		}
	}

	setHeartbeatOwner(t, "operator")
	waitBeat(t, sim, after(seq, func(p payload) bool { _, ok := p.node("owner-quiet"); return ok }))
}

// TestObserver_LivenessProbe runs `observer probe` the way the kubelet's exec
// probe does: it passes while the loop turns and fails once the process is
// frozen (SIGSTOP) past three full intervals.
func TestObserver_LivenessProbe(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	aliveFile := t.TempDir() + "/alive"
	p, _ := startObserver(t, sim, "KUBEHZ_FULL_INTERVAL=1s", "KUBEHZ_LIVENESS_FILE="+aliveFile)
	waitBeat(t, sim, nil)

	probe := func() (int, string) {
		cmd := exec.Command(suite.observerBin, "probe")
		cmd.Env = []string{"KUBEHZ_LIVENESS_FILE=" + aliveFile}
		out, err := cmd.CombinedOutput()
		if exit, ok := errors.AsType[*exec.ExitError](err); ok {
			return exit.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	// Until the loop's first turn the file holds the 10-minute start-up
	// deadline; wait for a loop deadline (three 1 s intervals) instead.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(aliveFile)
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && time.Until(time.Unix(0, ns)) < time.Minute {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop wrote no deadline of its own within 10 s")
		}
	}
	if code, out := probe(); code != 0 {
		t.Fatalf("probe failed while the loop runs: %d %s", code, out)
	}

	if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	code, out := probe()
	if err := syscall.Kill(p.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code == 0 || !strings.Contains(out, "stalled") {
		t.Fatalf("probe passed for a frozen loop: %d %s", code, out)
	}

	kube.WaitUntil(t, "the probe to pass again once the loop resumed", func() bool { code, _ := probe(); return code == 0 })
}
