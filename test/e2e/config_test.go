package e2e

import (
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// TestObserver_BadConfigurationExits2 gives the observer several bad
// settings at once: it must name every one, never echo the token, exit 2,
// and send nothing anywhere, neither to the platform (its URL is the
// simulator's, so a request would arrive) nor to the apiserver. A control
// run with the settings corrected beats to that same simulator.
func TestObserver_BadConfigurationExits2(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	start := time.Now()
	badToken := "khz_agt_THIS-IS-NOT-HEX-" + strings.Repeat("z", 40)
	bad := []string{"CLUSTER_ID=a/b", "KUBEHZ_AGENT_TOKEN=" + badToken, "KUBEHZ_DEBOUNCE=0s", "KUBEHZ_REPORT_NAMESPACES=maybe"}
	out := exits2(t, append(bad, "KUBEHZ_API_URL="+sim.URL(), "KUBECONFIG="+suite.observerKubeconfig))
	for _, name := range []string{"CLUSTER_ID", "KUBEHZ_AGENT_TOKEN", "KUBEHZ_DEBOUNCE", "KUBEHZ_REPORT_NAMESPACES"} {
		if !strings.Contains(out, name) {
			t.Errorf("output does not name %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "THIS-IS-NOT-HEX") {
		t.Errorf("output echoes the token value")
	}
	if n := len(sim.Requests()); n != 0 {
		t.Errorf("the platform got %d requests from a misconfigured observer", n)
	}
	if reqs := auditRequests(t, suite.auditLog, kube.ObserverUser, start); len(reqs) != 0 {
		t.Errorf("the apiserver got %d requests from a misconfigured observer, first %s %s", len(reqs), reqs[0].Verb, reqs[0].RequestURI)
	}

	// A plain-HTTP URL is refused with the rest, saying https is required.
	out = exits2(t, append(bad, "KUBEHZ_API_URL=http://platform.example.com", "KUBECONFIG="+suite.observerKubeconfig))
	if !strings.Contains(out, "KUBEHZ_API_URL") || !strings.Contains(out, "https") {
		t.Errorf("the URL error does not name KUBEHZ_API_URL and say https is required:\n%s", out)
	}

	// Control: corrected, the same observer beats to the same simulator.
	startObserver(t, sim)
	waitBeat(t, sim, after(0, nil))
}

// exits2 runs the observer with env and returns its output once it has
// exited 2.
func exits2(t *testing.T, env []string) string {
	t.Helper()
	p, err := kube.StartProcess(suite.observerBin, env)
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(30 * time.Second)
	if err != nil {
		p.Kill()
		t.Fatal(err)
	}
	if code != 2 {
		t.Errorf("exit code %d, want 2:\n%s", code, p.Output())
	}
	return p.Output()
}
