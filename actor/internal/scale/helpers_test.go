package scale

import (
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

const (
	testRev = 7
	testNS  = "kube-system"
	testMax = 50
)

var policy = Policy{MaxReplicas: testMax, Namespace: testNS, Revision: testRev}

func replicas(n int64) *int64 { return &n }

// worker is an ordinary worker MachineDeployment at n replicas.
func worker(name string, n int64) MD {
	return MD{Name: name, ResourceVersion: "rv-" + name, Replicas: replicas(n)}
}

// scaled is the patch that scales worker(name, …) from one count to another.
func scaled(name string, from *int64, to int64) Patch {
	return Patch{MDPatch: refuse.MDPatch{MD: name, Namespace: testNS, ResourceVersion: "rv-" + name}, From: from, To: to}
}

func mdsOf(mds ...MD) map[string]MD {
	out := make(map[string]MD, len(mds))
	for _, md := range mds {
		out[md.Name] = md
	}
	return out
}

func report(pool, status, detail string) wire.Action {
	return wire.Action{Type: wire.ActionScale, Target: pool, Status: status, Detail: detail, Revision: testRev}
}
