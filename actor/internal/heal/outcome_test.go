package heal

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/wire"
)

var machinesGR = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machines"}

// decidedStep is the in-progress step Decide makes for m1 on node-x.
func decidedStep() Step {
	return healing(machine("m1", "workers", "node-x"), "node-x", now.Add(-5*time.Minute),
		nodeCause("node-x", "NotReady", "5m0s", "1m0s"))
}

func TestHeal_OutcomeReportsWhatTheDeleteDid(t *testing.T) {
	const cause = "node node-x NotReady for 5m0s (unhealthyAfter 1m0s)"
	forbidden := apierrors.NewForbidden(machinesGR, "m1", errors.New("no delete for you"))
	long := strings.Repeat("é", 200)
	tests := []struct {
		name       string
		err        error
		want       wire.Action
		wantResult Result
		words      []string
	}{
		{
			name:       "success is done and says the MachineSet recreates it",
			err:        nil,
			want:       report("m1", wire.StatusDone, "deleted Machine ("+cause+"); its MachineSet recreates it"),
			wantResult: Deleted,
			words:      []string{"deleted Machine", "node-x", "recreates"},
		},
		{
			name:       "NotFound counts as done but Gone",
			err:        apierrors.NewNotFound(machinesGR, "m1"),
			want:       report("m1", wire.StatusDone, "Machine already gone ("+cause+"); its MachineSet recreates it"),
			wantResult: Gone,
			words:      []string{"node-x", "recreates"},
		},
		{
			name:       "a wrapped NotFound is still Gone",
			err:        fmt.Errorf("delete Machine m1: %w", apierrors.NewNotFound(machinesGR, "m1")),
			want:       report("m1", wire.StatusDone, "Machine already gone ("+cause+"); its MachineSet recreates it"),
			wantResult: Gone,
		},
		{
			name:       "Conflict from a failed precondition is a stale read, pending",
			err:        apierrors.NewConflict(machinesGR, "m1", errors.New("Precondition failed: UID in precondition: uid-m1, UID in object meta: uid-other")),
			want:       report("m1", wire.StatusPending, "stale read: the Machine changed since it was read; re-evaluating next poll"),
			wantResult: Stale,
			words:      []string{"stale read"},
		},
		{
			name: "Forbidden is failed with the RBAC hint naming the namespace",
			err:  forbidden,
			want: report("m1", wire.StatusFailed,
				`delete failed: RBAC: deploy/actor's Role must grant delete on machines.cluster.k8s.io in namespace "kube-system": `+forbidden.Error()),
			wantResult: Failed,
			words:      []string{"delete failed", "RBAC", `"kube-system"`},
		},
		{
			name:       "no answer at all is failed, and unsure whether it landed",
			err:        errors.New("connection refused"),
			want:       report("m1", wire.StatusFailed, "delete failed: connection refused"),
			wantResult: Unsure,
		},
		{
			name:       "a server error is failed, and unsure whether it landed",
			err:        apierrors.NewInternalError(errors.New("etcd down")),
			want:       report("m1", wire.StatusFailed, "delete failed: Internal error occurred: etcd down"),
			wantResult: Unsure,
		},
		{
			name:       "a definite refusal (422) is failed",
			err:        apierrors.NewInvalid(schema.GroupKind{Group: "cluster.k8s.io", Kind: "Machine"}, "m1", nil),
			want:       report("m1", wire.StatusFailed, `delete failed: Machine.cluster.k8s.io "m1" is invalid`),
			wantResult: Failed,
		},
		{
			name:       "line breaks in the error become spaces",
			err:        errors.New("first\nsecond\r\nthird"),
			want:       report("m1", wire.StatusFailed, "delete failed: first second  third"),
			wantResult: Unsure,
		},
		{
			name:       "error text of exactly 160 code points is kept whole",
			err:        errors.New(strings.Repeat("é", 160)),
			want:       report("m1", wire.StatusFailed, "delete failed: "+strings.Repeat("é", 160)),
			wantResult: Unsure,
		},
		{
			name:       "error text of 161 code points is cut at 160 with an ellipsis",
			err:        errors.New(strings.Repeat("é", 161)),
			want:       report("m1", wire.StatusFailed, "delete failed: "+strings.Repeat("é", 160)+"…"),
			wantResult: Unsure,
		},
		{
			name:       "long error text is cut at 160 code points with an ellipsis",
			err:        errors.New(long),
			want:       report("m1", wire.StatusFailed, "delete failed: "+strings.Repeat("é", 160)+"…"),
			wantResult: Unsure,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, result := Outcome(decidedStep(), tt.err, testNS)
			same(t, "action", got, tt.want)
			if result != tt.wantResult {
				t.Errorf("result = %d, want %d", result, tt.wantResult)
			}
			for _, w := range tt.words {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("detail %q lacks %q", got.Detail, w)
				}
			}
		})
	}
}

func TestHeal_OutcomeDoesNotChangeTheStep(t *testing.T) {
	step := decidedStep()
	Outcome(step, errors.New("boom"), testNS)
	same(t, "step", step, decidedStep())
}

func TestHeal_NodeChangedAndQueuedArePending(t *testing.T) {
	tests := []struct {
		name string
		got  wire.Action
		want wire.Action
	}{
		{
			name: "node recovered on the fresh read",
			got:  NodeChanged(decidedStep(), "node node-x is Ready again"),
			want: report("m1", wire.StatusPending, "stale read: node node-x is Ready again; re-evaluating next poll"),
		},
		{
			name: "queued behind an earlier failure",
			got:  Queued("m2", testRev),
			want: report("m2", wire.StatusPending, "queued behind an earlier failure in this pass; will retry next poll"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same(t, "action", tt.got, tt.want)
		})
	}
}

func TestHeal_RecordRemembersOnlyLandedDeletes(t *testing.T) {
	since := now.Add(-time.Hour)
	earlier := now.Add(-30 * time.Minute)
	d := decidedStep().Delete
	cause := nodeCause("node-x", "NotReady", "5m0s", "1m0s")
	// start has an older heal of the pool and an unrelated tracked machine.
	start := func() *Memory {
		m := NewMemory(since)
		m.LastHeal["workers"] = earlier
		m.Tracked["other"] = &Tracked{UID: "uid-other", Node: "n0", DeletedAt: earlier}
		return m
	}
	tests := []struct {
		name   string
		result Result
		d      *Delete
		want   *Memory
	}{
		{
			name:   "Deleted starts the cooldown and tracks the machine",
			result: Deleted,
			d:      d,
			want: &Memory{
				Since:    since,
				LastHeal: map[string]time.Time{"workers": now},
				Tracked: map[string]*Tracked{
					"other": {UID: "uid-other", Node: "n0", DeletedAt: earlier},
					"m1":    {UID: "uid-m1", Node: "node-x", Cause: cause, DeletedAt: now},
				},
			},
		},
		{
			name:   "Deleted joinless machine is tracked with no node",
			result: Deleted,
			d:      &Delete{Machine: "j1", UID: "uid-j1", Pool: "pool-b", Cause: "no node joined"},
			want: &Memory{
				Since:    since,
				LastHeal: map[string]time.Time{"workers": earlier, "pool-b": now},
				Tracked: map[string]*Tracked{
					"other": {UID: "uid-other", Node: "n0", DeletedAt: earlier},
					"j1":    {UID: "uid-j1", Cause: "no node joined", DeletedAt: now},
				},
			},
		},
		{
			name:   "Gone starts the cooldown but tracks nothing",
			result: Gone,
			d:      d,
			want: &Memory{
				Since:    since,
				LastHeal: map[string]time.Time{"workers": now},
				Tracked:  map[string]*Tracked{"other": {UID: "uid-other", Node: "n0", DeletedAt: earlier}},
			},
		},
		{name: "Stale records nothing", result: Stale, d: d, want: start()},
		{
			name:   "Failed starts no cooldown and is remembered as refused",
			result: Failed,
			d:      d,
			want: func() *Memory {
				m := start()
				m.Refused["m1"] = Refusal{UID: "uid-m1", At: now, Detail: "delete failed: forbidden"}
				return m
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := start()
			mem.Refused["m1"] = Refusal{UID: "uid-m1", At: earlier, Detail: "an earlier refusal"}
			mem.Record(tt.d, wire.Action{Detail: "delete failed: forbidden"}, tt.result, now)
			if tt.want.Refused == nil {
				tt.want.Refused = map[string]Refusal{}
			}
			same(t, "memory.Since", mem.Since, tt.want.Since)
			same(t, "memory.LastHeal", mem.LastHeal, tt.want.LastHeal)
			same(t, "memory.Tracked", mem.Tracked, tt.want.Tracked)
			if tt.d.Machine == "m1" || tt.result == Failed {
				same(t, "memory.Refused", mem.Refused, tt.want.Refused)
			}
		})
	}
}

func TestHeal_RecordedHealHoldsThePoolForTheCooldown(t *testing.T) {
	mem := NewMemory(now.Add(-time.Hour))
	mem.Record(decidedStep().Delete, wire.Action{}, Deleted, now)
	o := Observed{
		Machines: []Machine{machine("m2", "workers", "n2")},
		Nodes:    nodesOf(notReady("n2", now.Add(-5*time.Minute))),
		MDs:      workerPools("workers"),
	}
	// The wait reads the same at every pass: when the cooldown ends and
	// when the node went down.
	waiting := final("m2", wire.StatusPending, `waiting: cooldown of pool "workers" until `+
		now.Add(900*time.Second).UTC().Format(time.RFC3339)+"; node n2 NotReady since "+now.Add(-5*time.Minute).UTC().Format(time.RFC3339))
	tests := []struct {
		name string
		at   time.Time
		want Step
	}{
		{
			name: "1ns before the cooldown ends the pool waits",
			at:   now.Add(900*time.Second - time.Nanosecond),
			want: waiting,
		},
		{
			name: "right after the heal the pool waits the full cooldown",
			at:   now,
			want: waiting,
		},
		{
			name: "exactly when the cooldown ends the pool heals",
			at:   now.Add(900 * time.Second),
			want: healing(machine("m2", "workers", "n2"), "n2", now.Add(-5*time.Minute), nodeCause("n2", "NotReady", "20m0s", "1m0s")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(o, policy(), mem, tt.at)
			want := Decision{Steps: []Step{tt.want}, Keep: keep("m2")}
			if tt.want.Delete != nil {
				want.InFlight = 1
			}
			sameDecision(t, d, want)
		})
	}
}

// The RBAC hint leads the detail, so the wire's 256 code point cap cuts the
// apiserver's long text, never the namespace the user must fix.
func TestHeal_ForbiddenHintSurvivesTheWireCap(t *testing.T) {
	err := apierrors.NewForbidden(machinesGR, "kubehz-prod-pool1-7d9f8c6b5-x2k4q", errors.New(
		`User "system:serviceaccount:kubehz-system:kubehz-actor" cannot delete resource "machines" in API group "cluster.k8s.io" in the namespace "kube-system"`))
	a, _ := Outcome(decidedStep(), err, testNS)
	onWire := wire.Clamp(a.Detail, 256)
	for _, w := range []string{"delete failed", "RBAC", `namespace "kube-system"`} {
		if !strings.Contains(onWire, w) {
			t.Errorf("detail on the wire lacks %q:\n%s", w, onWire)
		}
	}
}

// A delete the apiserver refused is not asked again until the pool's
// cooldown has passed since, and its report stays the refusal's, word for
// word; the budget it did not use goes to the next candidate.
func TestHeal_ARefusedDeleteIsAskedAgainOnlyAfterTheCooldown(t *testing.T) {
	down := now.Add(-time.Hour)
	m1, m2 := machine("m1", "workers", "n1"), machine("m2", "pool-b", "n2")
	o := Observed{
		Machines: []Machine{m1, m2},
		Nodes:    nodesOf(notReady("n1", down), notReady("n2", down)),
		MDs:      workerPools("workers", "pool-b"),
	}
	refusedAt := now.Add(-time.Minute)
	mem := oldMemory()
	mem.Refused["m1"] = Refusal{UID: "uid-m1", At: refusedAt, Detail: "delete failed: admission denied"}
	cause := func(node string) string { return nodeCause(node, "NotReady", "1h0m0s", "1m0s") }

	held := Decide(o, policy(), mem, now)
	want := Decision{
		Steps:    []Step{final("m1", wire.StatusFailed, "delete failed: admission denied"), healing(m2, "n2", down, cause("n2"))},
		Keep:     keep("m1", "m2"),
		InFlight: 1,
	}
	sameDecision(t, held, want)

	// 900 s after the refusal it is asked again.
	at := refusedAt.Add(900 * time.Second)
	cause = func(node string) string { return nodeCause(node, "NotReady", "1h14m0s", "1m0s") }
	again := Decide(Observed{Machines: []Machine{m1}, Nodes: nodesOf(notReady("n1", down)), MDs: o.MDs}, policy(), mem, at)
	sameDecision(t, again, Decision{Steps: []Step{healing(m1, "n1", down, cause("n1"))}, Keep: keep("m1"), InFlight: 1})

	// A Machine of the same name but another UID is another Machine.
	other := m1
	other.UID = "uid-m1-new"
	fresh := Decide(Observed{Machines: []Machine{other}, Nodes: nodesOf(notReady("n1", down)), MDs: o.MDs}, policy(), mem, now)
	if deletes(fresh) != 1 {
		t.Errorf("a new Machine under a refused one's name: %s, want its delete", decisionString(fresh))
	}
}

func TestHeal_ForgetRefusalsKeepsOnlyMachinesStillThere(t *testing.T) {
	mem := NewMemory(now)
	for _, name := range []string{"live", "gone", "replaced", "deleting"} {
		mem.Refused[name] = Refusal{UID: types.UID("uid-" + name), At: now}
	}
	replaced, deleting := machine("replaced", "workers", "n2"), machine("deleting", "workers", "n3")
	replaced.UID, deleting.Deleting = "uid-other", true
	mem.ForgetRefusals(Observed{Machines: []Machine{machine("live", "workers", "n1"), replaced, deleting}})
	if got := slices.Sorted(maps.Keys(mem.Refused)); !slices.Equal(got, []string{"live"}) {
		t.Errorf("refusals kept for %v, want live only", got)
	}
}
