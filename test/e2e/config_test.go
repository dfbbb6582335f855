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
// and send nothing anywhere.
func TestObserver_BadConfigurationExits2(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	badToken := "khz_agt_THIS-IS-NOT-HEX-" + strings.Repeat("z", 40)
	p, err := kube.StartProcess(suite.observerBin, []string{
		"CLUSTER_ID=a/b",
		"KUBEHZ_API_URL=http://platform.example.com",
		"KUBEHZ_AGENT_TOKEN=" + badToken,
		"KUBEHZ_DEBOUNCE=0s",
		"KUBEHZ_REPORT_NAMESPACES=maybe",
		"KUBECONFIG=" + suite.observerKubeconfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.Wait(30 * time.Second)
	if err != nil {
		p.Kill()
		t.Fatal(err)
	}
	out := p.Output()
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	for _, name := range []string{"CLUSTER_ID", "KUBEHZ_API_URL", "KUBEHZ_AGENT_TOKEN", "KUBEHZ_DEBOUNCE", "KUBEHZ_REPORT_NAMESPACES"} {
		if !strings.Contains(out, name) {
			t.Errorf("output does not name %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "THIS-IS-NOT-HEX") {
		t.Errorf("output echoes the token value")
	}
	if !strings.Contains(out, "https") {
		t.Errorf("the URL error does not say https is required")
	}
	if n := len(sim.Requests()); n != 0 {
		t.Errorf("the platform got %d requests from a misconfigured observer", n)
	}
}
