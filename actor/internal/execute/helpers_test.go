package execute_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

// shippedLimits are deploy/actor's defaults, written out: at most 3
// Machines in flight, a 600 s cooldown, a 600 s startup window and a 300 s
// unhealthy window at the least.
var shippedLimits = heal.Limits{MaxInFlight: 3, MinCooldown: 600 * time.Second,
	MinStartupTimeout: 600 * time.Second, MinUnhealthyAfter: 300 * time.Second}

// poolMD is a MachineDeployment claiming the machines labelled pool=name,
// its template at kubelet v1.34.9.
func poolMD(name string, replicas int64) *cluster.MachineDeployment {
	r := md(name, replicas)
	r.Selector = labels.SelectorFromSet(labels.Set{"pool": name})
	r.Kubelet = "v1.34.9"
	return r
}

// machine is a Machine of pool (by label) on node ("" until it joined),
// created an hour before start.
func machine(name, pool, node string) *cluster.Machine {
	return &cluster.Machine{
		Namespace: mdNamespace, Name: name, ResourceVersion: "10", UID: types.UID("uid-" + name),
		Labels: map[string]string{"pool": pool}, Created: start.Add(-time.Hour), NodeName: node,
		Kubelet: "v1.34.9",
	}
}

func node(name, ready string, since time.Time) *cluster.Node {
	return &cluster.Node{Name: name, Ready: ready, Since: since}
}

func stuckPod(namespace, name, node string) heal.Pod {
	return heal.Pod{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), NodeName: node, Terminating: true}
}

// healPolicy is an enabled policy: a 300 s unhealthy window, a 600 s
// startup timeout, and the given limit and cooldown (seconds).
func healPolicy(maxUnhealthy int, cooldownSeconds int64) desired.Healing {
	return desired.Healing{Enabled: true, MaxUnhealthy: maxUnhealthy, UnhealthyAfterSeconds: 300,
		NodeStartupTimeoutSeconds: 600, CooldownSeconds: cooldownSeconds}
}

// healing authorizes healing of the tests' pools: the document names
// every pool a test creates, since the actor heals only named pools.
func healing(rev int64, policy desired.Healing) desired.Document {
	doc := desired.Document{Revision: rev, Execution: desired.Execution{Healing: true}, Healing: policy}
	for _, name := range []string{"edge-cp-pool", "pool-a", "pool-auto", "pool-b"} {
		doc.WorkerPools = append(doc.WorkerPools, desired.Pool{Name: name, MachineType: "cpx31"})
	}
	return doc
}

func upgrading(rev int64, version string, pools ...string) desired.Document {
	doc := desired.Document{Revision: rev, Execution: desired.Execution{Upgrades: true}}
	if version != "" {
		doc.KubernetesVersion = &version
	}
	for _, p := range pools {
		doc.WorkerPools = append(doc.WorkerPools, desired.Pool{Name: p, MachineType: "cpx31"})
	}
	return doc
}

// ofType keeps the actions of one type, in order.
func ofType(typ string, actions []wire.Action) []wire.Action {
	var out []wire.Action
	for _, a := range actions {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

// until is how a waiting heal names the end of its cooldown.
func until(t time.Time) string { return "until " + t.UTC().Format(time.RFC3339) }

// checkTyped compares the actions of type typ with want: target, status and
// revision exactly, and that each detail mentions its keyword(s), separated
// by "|".
func checkTyped(t *testing.T, what, typ string, actions []wire.Action, want []report) {
	t.Helper()
	got := ofType(typ, actions)
	var shape, wantShape []report
	for _, a := range got {
		shape = append(shape, report{a.Target, a.Status, a.Revision, ""})
	}
	for _, w := range want {
		wantShape = append(wantShape, report{w.Target, w.Status, w.Revision, ""})
	}
	if !slices.Equal(shape, wantShape) {
		t.Fatalf("%s: %s reports:\n got %+v\nwant %+v", what, typ, got, want)
	}
	for i, w := range want {
		for _, kw := range strings.Split(w.Keyword, "|") {
			if !strings.Contains(got[i].Detail, kw) {
				t.Errorf("%s: detail of %s is %q, want it to mention %q", what, w.Target, got[i].Detail, kw)
			}
		}
	}
}

func md(name string, replicas int64) *cluster.MachineDeployment {
	return &cluster.MachineDeployment{Namespace: mdNamespace, Name: name, ResourceVersion: "5", UID: types.UID("uid-" + name), Replicas: &replicas}
}

func scaling(rev int64, pools ...desired.Pool) desired.Document {
	return desired.Document{Revision: rev, WorkerPools: pools, Execution: desired.Execution{Scaling: true}}
}

func pool(name string, replicas int) desired.Pool {
	n := int64(replicas)
	return desired.Pool{Name: name, MachineType: "cpx31", DesiredReplicas: &n}
}

func joinless(name, pool string, age time.Duration) *cluster.Machine {
	m := machine(name, pool, "")
	m.Created = start.Add(-age)
	return m
}

func deleting(m *cluster.Machine) *cluster.Machine {
	m.Deleting = true
	return m
}

// report is what a test pins of one stored action: everything but the
// detail's exact wording, of which it names the keyword.
type report struct {
	Target, Status string
	Revision       int64
	Keyword        string
}

func checkReports(t *testing.T, what string, got []wire.Action, want []report) {
	t.Helper()
	var shape []report
	for _, a := range got {
		if a.Type != wire.ActionScale {
			t.Errorf("%s: action %+v is not of type scale", what, a)
		}
		shape = append(shape, report{a.Target, a.Status, a.Revision, ""})
	}
	var wantShape []report
	for _, w := range want {
		wantShape = append(wantShape, report{w.Target, w.Status, w.Revision, ""})
	}
	if !reflect.DeepEqual(shape, wantShape) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
	for i, w := range want {
		if !strings.Contains(got[i].Detail, w.Keyword) {
			t.Errorf("%s: detail of %s is %q, want it to mention %q", what, w.Target, got[i].Detail, w.Keyword)
		}
	}
}

// checkEvents compares the events, allowing the message of a done scale to
// carry a note after its "replicas A to B" head.
func checkEvents(t *testing.T, what string, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s events:\n got %+v\nwant %+v", what, got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.MD != w.MD || g.Warning != w.Warning || g.Reason != w.Reason || !strings.HasPrefix(g.Message, w.Message) {
			t.Errorf("%s event %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}
