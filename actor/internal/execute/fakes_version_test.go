package execute_test

import (
	"context"
	"maps"
	"slices"
	"time"

	"kubehz.dev/agent/actor/internal/cpversion"
)

// fakeVersion is every source of the control plane's version: /version
// answers version, and each control-plane Node in nodes reports its
// kubelet.
type fakeVersion struct {
	version string
	nodes   map[string]string // Node name → kubelet version
	err     error
	calls   int
}

func (v *fakeVersion) ControlPlaneVersions(context.Context) ([]cpversion.Reading, error) {
	v.calls++
	if v.err != nil {
		return nil, v.err
	}
	var out []cpversion.Reading
	for _, name := range slices.Sorted(maps.Keys(v.nodes)) {
		out = append(out, cpversion.Reading{Source: "Node " + name, Version: v.nodes[name]})
	}
	return append(out, cpversion.Reading{Source: "/version", Version: v.version}), nil
}

// trustControlPlane gives the executor's gate two reads of what the fake
// answers now, 10 s and 5 s before the clock, as a term that has watched a
// steady control plane would hold: the next pass vouches for it.
func (h *healHarness) trustControlPlane() {
	h.exec.CPGate = cpversion.Gate{}
	for _, ago := range []time.Duration{10 * time.Second, 5 * time.Second} {
		readings, err := h.version.ControlPlaneVersions(context.Background())
		h.exec.CPGate.Observe(cpversion.Sample{At: h.clock.Now().Add(-ago), Readings: readings, Err: err})
	}
	h.version.calls = 0
}
