package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

const clusterID = platformsim.DefaultClusterID

// beatWait bounds how long a test waits for a beat that the cadence says is
// due within about a second; generous, because a loaded CI machine is slow.
const beatWait = 30 * time.Second

// startSim starts a platform simulator on loopback for one test.
func startSim(t *testing.T, opts platformsim.Options) *platformsim.Server {
	t.Helper()
	sim := platformsim.New(opts)
	if _, err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	return sim
}

// writeToken writes the agent token file the observer reads.
func writeToken(t *testing.T, path, tok string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Rename, as the kubelet swaps a Secret volume atomically.
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// observerEnv is the environment of a test observer: fast cadence, the
// kubehz-observer identity, the simulator as platform.
func observerEnv(t *testing.T, sim *platformsim.Server, tokenFile string, extra ...string) []string {
	env := kube.AgentEnv{PlatformURL: sim.URL(), TokenFile: tokenFile, Kubeconfig: suite.observerKubeconfig}
	return append(env.List("KUBEHZ_FULL_INTERVAL=3s", "KUBEHZ_DEBOUNCE=200ms", "KUBEHZ_MIN_GAP=500ms", "KUBEHZ_LOG_LEVEL=debug"), extra...)
}

// startObserver runs the built observer under its ServiceAccount. At the end
// of the test it must stop cleanly on SIGTERM and must never have printed
// the agent token.
func startObserver(t *testing.T, sim *platformsim.Server, extra ...string) (*kube.Process, string) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "agent-token")
	writeToken(t, tokenFile, platformsim.DefaultToken)
	p, err := kube.StartProcess(suite.observerBin, observerEnv(t, sim, tokenFile, extra...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		assertNoListener(t, p)
		// 30 s: the grace period a pod gets (deploy/ sets none). A stop
		// takes well under a second; on a machine running both suites
		// and their controllers, a starved process has taken 15.
		code, err := p.Stop(30 * time.Second)
		out := p.Output()
		if err != nil || code != 0 {
			t.Errorf("observer did not stop cleanly (code %d, %v)", code, err)
		}
		for _, secret := range []string{platformsim.DefaultToken, "khz_agt_" + strings.Repeat("b", 64), "khz_agt_" + strings.Repeat("c", 64)} {
			if strings.Contains(out, secret) {
				t.Errorf("observer output contains the agent token")
			}
		}
		if t.Failed() {
			t.Logf("observer output:\n%s", tail(out, 6000))
		}
	})
	return p, tokenFile
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// waitBeat waits for an accepted beat that match accepts.
func waitBeat(t *testing.T, sim *platformsim.Server, match func(platformsim.Beat) bool) platformsim.Beat {
	t.Helper()
	return waitBeatWithin(t, sim, beatWait, match)
}

// after matches beats that arrived after sequence number seq.
func after(seq uint64, match func(payload) bool) func(platformsim.Beat) bool {
	return func(b platformsim.Beat) bool {
		if b.Seq <= seq {
			return false
		}
		return match == nil || match(decode(b))
	}
}

// payload is the beat as the platform reads it, declared here from the
// contract rather than borrowed from the agent's own types.
type payload struct {
	Schema     int    `json:"schema"`
	ClusterID  string `json:"clusterId"`
	Timestamp  string `json:"timestamp"`
	Agent      struct{ Version, Mode string }
	Kubernetes struct{ Version string }
	Nodes      []node `json:"nodes"`
	Workloads  struct {
		Pods map[string]any `json:"pods"`
	} `json:"workloads"`
	Events []event `json:"events"`
}

type node struct {
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	Ready          bool              `json:"ready"`
	Roles          string            `json:"roles"`
	InstanceType   string            `json:"instanceType,omitempty"`
	KubeletVersion string            `json:"kubeletVersion,omitempty"`
	Capacity       map[string]string `json:"capacity,omitempty"`
}

type event struct {
	Reason    string `json:"reason"`
	Kind      string `json:"kind"`
	Count     int32  `json:"count"`
	LastSeen  string `json:"lastSeen"`
	Namespace string `json:"namespace,omitempty"`
	Note      string `json:"note,omitempty"`
}

func decode(b platformsim.Beat) payload {
	var p payload
	_ = json.Unmarshal(b.Body, &p)
	return p
}

func (p payload) node(name string) (node, bool) {
	for _, n := range p.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return node{}, false
}

// assertNoListener checks the promise that the agent only dials out: the
// process holds no listening TCP socket.
func assertNoListener(t *testing.T, p *kube.Process) {
	t.Helper()
	if p.Exited() {
		return
	}
	l, err := kube.Listening(p.Pid())
	if err != nil {
		t.Errorf("read the process' sockets: %v", err)
		return
	}
	if len(l) > 0 {
		t.Errorf("the binary listens on %v; it must only dial out", l)
	}
}
