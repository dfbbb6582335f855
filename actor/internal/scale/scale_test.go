package scale

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

var mdResource = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}

const reconciles = "; machine-controller reconciles the Machines with the cluster's own credentials"

func TestScale_Pass(t *testing.T) {
	cases := []struct {
		name        string
		pools       []Target
		mds         map[string]MD
		listErr     error
		patchErrs   map[string]error
		want        []wire.Action
		wantPatches []Patch
		wantRetry   bool
		keywords    map[string][]string // pool → substrings its detail must hold (docs/contract.md#report-details)
	}{
		{
			name:  "2 to 3 patches once and is done at revision 7",
			pools: []Target{{Name: "pool-a", DesiredReplicas: 3}},
			mds:   mdsOf(worker("pool-a", 2), worker("other-md", 1)),
			want:  []wire.Action{report("pool-a", wire.StatusDone, "replicas 2 to 3"+reconciles)},
			wantPatches: []Patch{
				scaled("pool-a", replicas(2), 3),
			},
			keywords: map[string][]string{"pool-a": {"replicas 2 to 3;"}},
		},
		{
			name:     "already at the desired count is done with no patch",
			pools:    []Target{{Name: "pool-a", DesiredReplicas: 3}},
			mds:      mdsOf(worker("pool-a", 3)),
			want:     []wire.Action{report("pool-a", wire.StatusDone, "already at 3 replicas")},
			keywords: map[string][]string{"pool-a": {"already at 3 replicas"}},
		},
		{
			name:  "51 and -1 fail naming KUBEHZ_MAX_REPLICAS and never clamp",
			pools: []Target{{Name: "pool-big", DesiredReplicas: 51}, {Name: "pool-neg", DesiredReplicas: -1}},
			mds:   mdsOf(worker("pool-big", 2), worker("pool-neg", 2)),
			want: []wire.Action{
				report("pool-big", wire.StatusFailed, "desired replicas 51 is outside 0..50 (KUBEHZ_MAX_REPLICAS); refusing, not clamping"),
				report("pool-neg", wire.StatusFailed, "desired replicas -1 is outside 0..50 (KUBEHZ_MAX_REPLICAS); refusing, not clamping"),
			},
			keywords: map[string][]string{
				"pool-big": {"51", "0..50", "KUBEHZ_MAX_REPLICAS"},
				"pool-neg": {"-1", "0..50", "KUBEHZ_MAX_REPLICAS"},
			},
		},
		{
			name:  "boundaries 0 and max are in range",
			pools: []Target{{Name: "pool-max", DesiredReplicas: 50}, {Name: "pool-zero", DesiredReplicas: 0}},
			mds:   mdsOf(worker("pool-max", 2), worker("pool-zero", 2)),
			want: []wire.Action{
				report("pool-max", wire.StatusDone, "replicas 2 to 50"+reconciles),
				report("pool-zero", wire.StatusDone, "replicas 2 to 0"+reconciles),
			},
			wantPatches: []Patch{
				scaled("pool-max", replicas(2), 50),
				scaled("pool-zero", replicas(2), 0),
			},
		},
		{
			name:  "an unmatched pool fails without blocking the other",
			pools: []Target{{Name: "pool-x", DesiredReplicas: 2}, {Name: "pool-a", DesiredReplicas: 3}},
			mds:   mdsOf(worker("pool-a", 2)),
			want: []wire.Action{
				report("pool-a", wire.StatusDone, "replicas 2 to 3"+reconciles),
				report("pool-x", wire.StatusFailed, `no MachineDeployment named "pool-x" in namespace "kube-system" (pools are matched to MachineDeployments by name)`),
			},
			wantPatches: []Patch{
				scaled("pool-a", replicas(2), 3),
			},
			keywords: map[string][]string{"pool-x": {"no MachineDeployment", "pool-x", testNS, "by name"}},
		},
		{
			name:  "autoscaler annotations of either group refuse with no patch",
			pools: []Target{{Name: "pool-k8s", DesiredReplicas: 3}, {Name: "pool-x-k8s", DesiredReplicas: 3}},
			mds: mdsOf(
				MD{Name: "pool-k8s", Replicas: replicas(2), Annotations: map[string]string{
					"cluster.k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}},
				MD{Name: "pool-x-k8s", Replicas: replicas(2), Annotations: map[string]string{
					"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1"}},
			),
			want: []wire.Action{
				report("pool-k8s", wire.StatusFailed, `refusing: MachineDeployment "pool-k8s" is managed by cluster-autoscaler (annotation cluster.k8s.io/cluster-api-autoscaler-node-group-max-size)`),
				report("pool-x-k8s", wire.StatusFailed, `refusing: MachineDeployment "pool-x-k8s" is managed by cluster-autoscaler (annotation cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size)`),
			},
			keywords: map[string][]string{
				"pool-k8s":   {"cluster-autoscaler", "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"},
				"pool-x-k8s": {"cluster-autoscaler", "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"},
			},
		},
		{
			name:      "a transient patch error halts the sorted rest and retries",
			pools:     []Target{{Name: "c-pool", DesiredReplicas: 1}, {Name: "b-pool", DesiredReplicas: 3}, {Name: "a-pool", DesiredReplicas: 3}},
			mds:       mdsOf(worker("a-pool", 2), worker("b-pool", 2), worker("c-pool", 1)),
			patchErrs: map[string]error{"a-pool": errors.New("patch MachineDeployment a-pool: connection refused")},
			want: []wire.Action{
				report("a-pool", wire.StatusFailed, "patch failed: patch MachineDeployment a-pool: connection refused"),
				report("b-pool", wire.StatusPending, "queued behind an earlier failure in this pass; will retry next poll"),
				report("c-pool", wire.StatusPending, "queued behind an earlier failure in this pass; will retry next poll"),
			},
			wantPatches: []Patch{
				scaled("a-pool", replicas(2), 3),
			},
			wantRetry: true,
			keywords:  map[string][]string{"a-pool": {"patch failed: "}, "b-pool": {"queued"}, "c-pool": {"queued"}},
		},
		{
			name:    "a List failure fails every pool and retries",
			pools:   []Target{{Name: "pool-b", DesiredReplicas: 3}, {Name: "pool-a", DesiredReplicas: 3}},
			listErr: errors.New("machinedeployments.cluster.k8s.io is forbidden:\nno access"),
			want: []wire.Action{
				report("pool-a", wire.StatusFailed, `cannot list MachineDeployments in namespace "kube-system": machinedeployments.cluster.k8s.io is forbidden: no access`),
				report("pool-b", wire.StatusFailed, `cannot list MachineDeployments in namespace "kube-system": machinedeployments.cluster.k8s.io is forbidden: no access`),
			},
			wantRetry: true,
			keywords:  map[string][]string{"pool-a": {"list MachineDeployments", testNS, "no access"}},
		},
		{
			name:      "a nil MD map is a failed List",
			pools:     []Target{{Name: "pool-a", DesiredReplicas: 3}},
			want:      []wire.Action{report("pool-a", wire.StatusFailed, `cannot list MachineDeployments in namespace "kube-system": no result`)},
			wantRetry: true,
		},
		{
			name:  "an invalid name fails and never reaches the API",
			pools: []Target{{Name: "Not A Name!", DesiredReplicas: 3}},
			mds:   mdsOf(worker("Not A Name!", 2)),
			want: []wire.Action{
				report("Not A Name!", wire.StatusFailed, `invalid pool name "Not A Name!": not a DNS-1123 subdomain`),
			},
			keywords: map[string][]string{"Not A Name!": {"invalid pool name"}},
		},
		{
			name:  "an empty name is not reported and does not block",
			pools: []Target{{Name: "", DesiredReplicas: 3}, {Name: "pool-a", DesiredReplicas: 3}},
			mds:   mdsOf(worker("pool-a", 3)),
			want:  []wire.Action{report("pool-a", wire.StatusDone, "already at 3 replicas")},
		},
		{
			name:  "unknown replicas are always patched and reported as unknown",
			pools: []Target{{Name: "pool-a", DesiredReplicas: 3}},
			mds:   mdsOf(MD{Name: "pool-a", ResourceVersion: "9"}),
			want:  []wire.Action{report("pool-a", wire.StatusDone, "replicas unknown to 3"+reconciles)},
			wantPatches: []Patch{
				{MDPatch: refuse.MDPatch{MD: "pool-a", Namespace: testNS, ResourceVersion: "9"}, To: 3},
			},
			keywords: map[string][]string{"pool-a": {"replicas unknown to 3;"}},
		},
		{
			name:  "a 409 on a stale read is re-evaluated, does not halt, and retries",
			pools: []Target{{Name: "pool-a", DesiredReplicas: 3}, {Name: "pool-b", DesiredReplicas: 4}},
			mds:   mdsOf(worker("pool-a", 2), worker("pool-b", 2)),
			patchErrs: map[string]error{"pool-a": apierrors.NewConflict(mdResource, "pool-a",
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))},
			want: []wire.Action{
				report("pool-a", wire.StatusPending, `stale read; re-evaluating next poll (MachineDeployment "pool-a" changed since it was read)`),
				report("pool-b", wire.StatusDone, "replicas 2 to 4"+reconciles),
			},
			wantPatches: []Patch{
				scaled("pool-a", replicas(2), 3),
				scaled("pool-b", replicas(2), 4),
			},
			wantRetry: true,
			keywords:  map[string][]string{"pool-a": {"stale read", "re-evaluating"}},
		},
		{
			name:  "a pool named twice is refused once with no patch",
			pools: []Target{{Name: "pool-a", DesiredReplicas: 3}, {Name: "pool-b", DesiredReplicas: 2}, {Name: "pool-a", DesiredReplicas: 4}},
			mds:   mdsOf(worker("pool-a", 2), worker("pool-b", 2)),
			want: []wire.Action{
				report("pool-a", wire.StatusFailed, `pool "pool-a" is named more than once in the desired state; refusing to pick one`),
				report("pool-b", wire.StatusDone, "already at 2 replicas"),
			},
		},
		{
			name: "no pools plan nothing",
			mds:  mdsOf(worker("pool-a", 2)),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{errs: tc.patchErrs}
			got, retry := execute(Plan(tc.pools, tc.mds, tc.listErr, policy), api)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reports:\n got %+v\nwant %+v", got, tc.want)
			}
			if !reflect.DeepEqual(api.patches, tc.wantPatches) {
				t.Errorf("patches:\n got %+v\nwant %+v", api.patches, tc.wantPatches)
			}
			if retry != tc.wantRetry {
				t.Errorf("retry = %v, want %v", retry, tc.wantRetry)
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

func TestScale_ControlPlaneIsRefusedWithNoPatch(t *testing.T) {
	label := func(key string) map[string]string { return map[string]string{key: ""} }
	cp, master := "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"
	cases := []struct {
		name string
		md   MD
	}{
		{"control-plane label in metadata.labels", MD{Name: "pool-a", Labels: label(cp)}},
		{"master label in spec.template.metadata.labels", MD{Name: "pool-a", TemplateLabels: label(master)}},
		{"control-plane label in spec.template.spec.metadata.labels", MD{Name: "pool-a", TemplateSpecMetaLabels: label(cp)}},
		{"master label in spec.template.spec.labels", MD{Name: "pool-a", TemplateSpecLabels: label(master)}},
		{"name prod-control-plane", MD{Name: "prod-control-plane"}},
		{"name with controlplane", MD{Name: "edge-controlplane"}},
		{"cp segment in prod-cp-1", MD{Name: "prod-cp-1"}},
		{"cp segment in edge-cp-pool", MD{Name: "edge-cp-pool"}},
		{"cp segment after a dot", MD{Name: "prod.cp"}},
		{"name master-pool", MD{Name: "master-pool"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.md.Replicas = replicas(1)
			api := &fakeAPI{}
			got, retry := execute(Plan([]Target{{Name: tc.md.Name, DesiredReplicas: 3}}, mdsOf(tc.md), nil, policy), api)
			if len(got) != 1 || got[0].Status != wire.StatusFailed || !strings.Contains(got[0].Detail, "control-plane") {
				t.Fatalf("reports = %+v, want one failed control-plane refusal", got)
			}
			if len(api.patches) != 0 || retry {
				t.Fatalf("patches = %+v, retry = %v; want none and false", api.patches, retry)
			}
			if refuse.ControlPlaneReason(tc.md.poolLabels()) == "" {
				t.Fatal("ControlPlaneReason is empty")
			}
		})
	}
}

func TestScale_HetznerTypeNameIsNotControlPlane(t *testing.T) {
	for _, name := range []string{"cpx31-workers", "workers-cpx21", "ccp-pool", "cp1-pool"} {
		md := worker(name, 1)
		if refuse.ControlPlaneReason(md.poolLabels()) != "" {
			t.Errorf("ControlPlaneReason(%q) is not empty", name)
		}
		api := &fakeAPI{}
		got, _ := execute(Plan([]Target{{Name: name, DesiredReplicas: 2}}, mdsOf(md), nil, policy), api)
		if len(api.patches) != 1 || got[0].Status != wire.StatusDone {
			t.Errorf("%s: reports %+v, patches %+v; want it scaled", name, got, api.patches)
		}
	}
}

func TestScale_OnlyTheFirst100SortedPoolsAreProcessed(t *testing.T) {
	var pools []Target
	mds := map[string]MD{}
	for i := 100; i >= 0; i-- { // 101 pools, given in reverse
		name := fmt.Sprintf("pool-%03d", i)
		pools = append(pools, Target{Name: name, DesiredReplicas: 2})
		mds[name] = worker(name, 1)
	}
	steps := Plan(pools, mds, nil, policy)
	if len(steps) != 100 {
		t.Fatalf("steps = %d, want 100", len(steps))
	}
	if first, last := steps[0].Action.Target, steps[99].Action.Target; first != "pool-000" || last != "pool-099" {
		t.Fatalf("processed %s..%s, want pool-000..pool-099", first, last)
	}
	if pools[0].Name != "pool-100" {
		t.Fatal("Plan reordered the caller's slice")
	}
}

func TestScale_ForbiddenPatchFailsWithRBACHintAndHalts(t *testing.T) {
	steps := Plan([]Target{{Name: "pool-a", DesiredReplicas: 3}}, mdsOf(worker("pool-a", 2)), nil, policy)
	err := apierrors.NewForbidden(mdResource, "pool-a", errors.New(`User "system:serviceaccount:kubehz-system:kubehz-actor" cannot patch`))
	a, halt := Outcome(steps[0], err)
	if !halt || a.Status != wire.StatusFailed {
		t.Fatalf("outcome = %+v, halt %v; want failed and halt", a, halt)
	}
	for _, kw := range []string{"patch failed: ", "forbidden", "RBAC", "deploy/actor", testNS} {
		if !strings.Contains(a.Detail, kw) {
			t.Errorf("detail %q lacks %q", a.Detail, kw)
		}
	}
}

func TestScale_OutcomeWithoutPatchIsTheStepItself(t *testing.T) {
	step := Step{Action: report("pool-a", wire.StatusDone, "already at 3 replicas")}
	if a, halt := Outcome(step, errors.New("ignored")); a != step.Action || halt {
		t.Fatalf("Outcome = %+v, %v", a, halt)
	}
}

func TestScale_PatchBodyCarriesTheDecidedResourceVersion(t *testing.T) {
	p := Patch{MDPatch: refuse.MDPatch{MD: "pool-a", ResourceVersion: "123"}, From: replicas(2), To: 3}
	if got, want := string(p.Body()), `{"metadata":{"resourceVersion":"123"},"spec":{"replicas":3}}`; got != want {
		t.Errorf("Body = %s, want %s", got, want)
	}
	p.ResourceVersion = ""
	if got, want := string(p.Body()), `{"spec":{"replicas":3}}`; got != want {
		t.Errorf("Body without rv = %s, want %s", got, want)
	}
}

// TestScale_UnknownCountIsRefusedNeverScaledToZero: a pool whose
// desiredReplicas was missing, null or not an integer must not read as 0.
func TestScale_UnknownCountIsRefusedNeverScaledToZero(t *testing.T) {
	steps := Plan([]Target{{Name: "pool-a", Unknown: true}}, mdsOf(worker("pool-a", 3)), nil, policy)
	if len(steps) != 1 || steps[0].Patch != nil || steps[0].Action.Status != wire.StatusFailed ||
		!strings.Contains(steps[0].Action.Detail, "desiredReplicas is missing") {
		t.Fatalf("got %+v, want a refusal with no patch", steps)
	}
}

// A name given twice must be refused even when its second copy sorts past
// the 100-pool cut: the duplicate check reads the whole list.
func TestScale_DuplicateStraddlingThe100PoolCutIsRefused(t *testing.T) {
	var pools []Target
	mds := map[string]MD{}
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("pool-%03d", i)
		pools = append(pools, Target{Name: name, DesiredReplicas: 2})
		mds[name] = worker(name, 1)
	}
	pools = append(pools, Target{Name: "pool-099", DesiredReplicas: 5}) // 101st entry, the 100th name again
	steps := Plan(pools, mds, nil, policy)
	last := steps[len(steps)-1]
	if last.Action.Target != "pool-099" || last.Patch != nil || last.Action.Status != wire.StatusFailed ||
		!strings.Contains(last.Action.Detail, "more than once") {
		t.Fatalf("pool-099 step = %+v (patch %v), want a refusal naming the duplicate", last.Action, last.Patch)
	}
}

func TestScale_PatchErrorIsCutAt160CodePoints(t *testing.T) {
	steps := Plan([]Target{{Name: "pool-a", DesiredReplicas: 3}}, mdsOf(worker("pool-a", 2)), nil, policy)
	a, _ := Outcome(steps[0], errors.New(strings.Repeat("x", 300)))
	if want := "patch failed: " + strings.Repeat("x", 160) + "…"; a.Detail != want {
		t.Errorf("detail = %q", a.Detail)
	}
}
