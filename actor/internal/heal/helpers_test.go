package heal

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

// now is the fixed clock every test reads.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const (
	testRev = 4
	testNS  = "kube-system"
)

// policy is the usual test policy: limit 2, the 60 s floor as the unhealthy
// window, a 10 minute startup timeout and the default 900 s cooldown.
func policy() Policy {
	return Policy{
		MaxUnhealthy:   2,
		UnhealthyAfter: 60 * time.Second,
		StartupTimeout: 600 * time.Second,
		Cooldown:       900 * time.Second,
		Revision:       testRev,
		Named:          named,
	}
}

// named is every pool the tests' documents name: all but "unnamed".
var named = map[string]bool{"auto": true, "both": true, "edge-cp-pool": true, "ghost": true, "pool-a": true,
	"pool-b": true, "pool-c": true, "pool-m": true, "pool-q": true, "pool-z": true, "prod-cp-1": true, "scaled": true, "workers": true}

// with returns p changed by f, so a table row states only what differs.
func with(p Policy, f func(*Policy)) Policy {
	f(&p)
	return p
}

// machine is a worker Machine of pool whose node joined as node.
func machine(name, pool, node string) Machine {
	return Machine{
		Name:            name,
		UID:             types.UID("uid-" + name),
		ResourceVersion: "rv-" + name,
		Pool:            pool,
		Created:         now.Add(-24 * time.Hour),
		NodeName:        node,
	}
}

// joinless is a worker Machine of pool created at created whose node never
// joined.
func joinless(name, pool string, created time.Time) Machine {
	m := machine(name, pool, "")
	m.Created = created
	return m
}

func deleting(m Machine) Machine {
	m.Deleting = true
	return m
}

func controlPlane(m Machine) Machine {
	m.ControlPlane = true
	return m
}

func notReady(name string, since time.Time) Node {
	return Node{Name: name, Ready: ReadyFalse, Since: since}
}

func unknown(name string, since time.Time) Node {
	return Node{Name: name, Ready: ReadyUnknown, Since: since}
}

func ready(name string) Node {
	return Node{Name: name, Ready: ReadyTrue, Since: now.Add(-24 * time.Hour)}
}

func nodesOf(ns ...Node) map[string]Node {
	out := make(map[string]Node, len(ns))
	for _, n := range ns {
		out[n.Name] = n
	}
	return out
}

// workerPools is a set of ordinary worker MachineDeployments.
func workerPools(names ...string) map[string]MD {
	out := make(map[string]MD, len(names))
	for _, n := range names {
		out[n] = MD{}
	}
	return out
}

func keep(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// oldMemory is a term that began long ago and has healed nothing, so no
// cooldown holds.
func oldMemory() *Memory {
	return NewMemory(now.Add(-24 * time.Hour))
}

func report(target, status, detail string) wire.Action {
	return wire.Action{Type: wire.ActionHeal, Target: target, Status: status, Detail: detail, Revision: testRev}
}

// nodeCause is the cause text of a node-backed candidate, as the contract
// shapes it.
func nodeCause(node, state, down, window string) string {
	return "node " + node + " " + state + " for " + down + " (unhealthyAfter " + window + ")"
}

// healing is the in-progress step that deletes m for a node down since.
func healing(m Machine, node string, since time.Time, cause string) Step {
	return Step{
		Action: report(m.Name, wire.StatusInProgress, "deleting Machine ("+cause+")"),
		Delete: &Delete{
			Machine: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
			Pool: m.Pool, Node: node, NodeSince: since, Cause: cause,
		},
	}
}

// final is a step whose report is final for this pass.
func final(machine, status, detail string) Step {
	return Step{Action: report(machine, status, detail)}
}

func stepsString(steps []Step) string {
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "\n  [%d] %+v", i, s.Action)
		if s.Delete != nil {
			fmt.Fprintf(&b, "\n      delete %+v", *s.Delete)
		}
	}
	if len(steps) == 0 {
		b.WriteString(" (none)")
	}
	return b.String()
}

func decisionString(d Decision) string {
	return fmt.Sprintf("Storm=%v InFlight=%d Keep=%v Unbacked=%q Steps:%s",
		d.Storm, d.InFlight, d.Keep, d.Unbacked, stepsString(d.Steps))
}

// sameDecision fails t, showing both sides, unless got equals want whole.
func sameDecision(t *testing.T, got, want Decision) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decision differs\n got: %s\nwant: %s", decisionString(got), decisionString(want))
		for i := range max(len(got.Steps), len(want.Steps)) {
			if i >= len(got.Steps) || i >= len(want.Steps) || !reflect.DeepEqual(got.Steps[i], want.Steps[i]) {
				t.Errorf("first differing step is [%d]", i)
				break
			}
		}
	}
}

// same fails t unless got equals want whole.
func same[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs\n got: %+v\nwant: %+v", what, got, want)
	}
}
