package upgrade

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

const (
	testRev = 9
	testNS  = "kube-system"
	// The versions of the contract's examples.
	oldV = "v1.34.9"
	newV = "v1.35.6"
	cpV  = "v1.35.6"
)

func replicas(n int64) *int64 { return &n }

// worker is an ordinary worker MachineDeployment at kubelet with n replicas.
func worker(name, kubelet string, n int64) MD {
	return MD{Name: name, ResourceVersion: "rv-" + name, Kubelet: kubelet, Replicas: replicas(n)}
}

// roll is the patch that rolls worker(name, …) from one kubelet to target.
func roll(name, from, target string) Patch {
	return Patch{MDPatch: refuse.MDPatch{MD: name, Namespace: testNS, ResourceVersion: "rv-" + name}, From: from, Target: target}
}

func mdsOf(mds ...MD) map[string]MD {
	out := make(map[string]MD, len(mds))
	for _, md := range mds {
		out[md.Name] = md
	}
	return out
}

// joined is a machine of pool running kubelet on a joined node.
func joined(name, pool, kubelet string) Machine {
	return Machine{Name: name, Pool: pool, Kubelet: kubelet, NodeName: "node-" + name}
}

func policyFor(target string, pools ...string) Policy {
	return Policy{Target: target, Pools: pools, Namespace: testNS, Revision: testRev}
}

func report(pool, status, detail string) wire.Action {
	return wire.Action{Type: wire.ActionUpgrade, Target: pool, Status: status, Detail: detail, Revision: testRev}
}

// passCase is one pass through execute, its whole result compared.
type passCase struct {
	name        string
	o           Observed
	p           Policy
	mem         RolledFrom // before the pass; nil is empty
	patchErrs   map[string]error
	want        []wire.Action
	wantPatches []Patch
	wantRetry   bool
	wantMem     RolledFrom          // after the pass; nil is empty
	keywords    map[string][]string // pool → substrings its detail must hold (docs/contract.md#report-details)
}

func runPassCases(t *testing.T, cases []passCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := RolledFrom{}
			maps.Copy(mem, tc.mem)
			api := &fakeAPI{errs: tc.patchErrs}
			got, retry := execute(tc.o, tc.p, mem, api)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reports:\n got %+v\nwant %+v", got, tc.want)
			}
			if !reflect.DeepEqual(api.patches, tc.wantPatches) {
				t.Errorf("patches:\n got %+v\nwant %+v", api.patches, tc.wantPatches)
			}
			if retry != tc.wantRetry {
				t.Errorf("retry = %v, want %v", retry, tc.wantRetry)
			}
			wantMem := RolledFrom{}
			maps.Copy(wantMem, tc.wantMem)
			if !maps.Equal(mem, wantMem) {
				t.Errorf("memory = %v, want %v", mem, wantMem)
			}
			for _, a := range got {
				for _, kw := range tc.keywords[a.Target] {
					if !strings.Contains(a.Detail, kw) {
						t.Errorf("%s detail %q lacks %q", a.Target, a.Detail, kw)
					}
				}
			}
		})
	}
}
