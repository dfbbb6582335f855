package upgrade

import (
	"fmt"
	"reflect"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// TestUpgrade_SkewPolicyBoundaries: with the control plane on 1.37 a target
// from 1.34 (3 minors older) up to 1.37 rolls; 1.33 is skew, final; 1.38 and
// a newer major wait for the control plane.
func TestUpgrade_SkewPolicyBoundaries(t *testing.T) {
	const cp = "v1.37.0"
	behind := func(target string) string {
		return fmt.Sprintf("control plane not yet at target: observed %s, target %s; upgrade the control plane first (lo provision / kubeone apply)", cp, target)
	}
	skewed := func(target string) string {
		return fmt.Sprintf("version skew: target %s is outside the policy for control plane %s (a kubelet may be at most 3 minors older than the apiserver, same major); refusing", target, cp)
	}
	cases := []struct {
		name      string
		current   string
		target    string
		want      wire.Action
		wantPatch bool
		wantRetry bool
	}{
		{"3 minors older rolls", "v1.33.0", "v1.34.0", report("pool-a", wire.StatusInProgress, "v1.33.0 → v1.34.0 (0/0)"), true, true},
		{"4 minors older is skew", "v1.33.0", "v1.33.9", report("pool-a", wire.StatusFailed, skewed("v1.33.9")), false, false},
		{"the control plane's minor rolls, its patch level ignored", "v1.36.0", "v1.37.2", report("pool-a", wire.StatusInProgress, "v1.36.0 → v1.37.2 (0/0)"), true, true},
		{"one minor newer waits for the control plane", "v1.36.0", "v1.38.0", report("pool-a", wire.StatusFailed, behind("v1.38.0")), false, true},
		{"a newer major waits for the control plane", "v1.36.0", "v2.0.0", report("pool-a", wire.StatusFailed, behind("v2.0.0")), false, true},
		{"an older major is skew", "v0.36.0", "v0.37.0", report("pool-a", wire.StatusFailed, skewed("v0.37.0")), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Observed{MDs: mdsOf(worker("pool-a", tc.current, 0)), ControlPlane: cp}
			steps, retry := Plan(o, policyFor(tc.target, "pool-a"), RolledFrom{})
			want := []Step{{Action: tc.want}}
			if tc.wantPatch {
				p := roll("pool-a", tc.current, tc.target)
				want[0].Patch = &p
			}
			if !reflect.DeepEqual(steps, want) || retry != tc.wantRetry {
				t.Errorf("Plan = %+v retry %v\nwant %+v retry %v", steps, retry, want, tc.wantRetry)
			}
		})
	}
}

// TestUpgrade_AtMostOnePatchInAnyPlan plans every mix of four pools in five
// states and checks that no plan starts two rolls, nor one while a pool is
// already rolling.
func TestUpgrade_AtMostOnePatchInAnyPlan(t *testing.T) {
	type state struct {
		md       func(name string) MD
		machines func(name string) []Machine
		rolling  bool
	}
	none := func(string) []Machine { return nil }
	states := []state{
		{md: func(n string) MD { return worker(n, oldV, 1) }, machines: none},                // needs a roll
		{md: func(n string) MD { return worker(n, newV, 1) }, machines: none, rolling: true}, // mid-roll
		{md: func(n string) MD { return worker(n, newV, 0) }, machines: none},                // converged
		{md: func(n string) MD { return worker(n+"-cp", oldV, 1) }, machines: none},          // control plane
		{md: func(n string) MD { return worker(n, "v1.36.0", 1) }, machines: none},           // downgrade
	}
	for combo := 0; combo < 5*5*5*5; combo++ {
		var names []string
		mds := map[string]MD{}
		rolling := false
		for i, c := 0, combo; i < 4; i, c = i+1, c/5 {
			s := states[c%5]
			md := s.md(fmt.Sprintf("pool-%d", i))
			names = append(names, md.Name)
			mds[md.Name] = md
			rolling = rolling || s.rolling
		}
		steps, _ := Plan(Observed{MDs: mds, ControlPlane: cpV}, policyFor(newV, names...), RolledFrom{})
		patches := 0
		for _, s := range steps {
			if s.Patch != nil {
				patches++
			}
		}
		if patches > 1 || (rolling && patches > 0) {
			t.Fatalf("combo %d (rolling %v): %d patches in %+v", combo, rolling, patches, steps)
		}
	}
}

func TestUpgrade_OnlyTheFirst100SortedPoolsAreProcessed(t *testing.T) {
	var names []string
	mds := map[string]MD{}
	var machines []Machine
	for i := 100; i >= 0; i-- { // 101 pools, given in reverse
		name := fmt.Sprintf("pool-%03d", i)
		names = append(names, name)
		mds[name] = worker(name, oldV, 1)
		machines = append(machines, joined(name+"-1", name, oldV))
	}
	steps, retry := Plan(Observed{MDs: mds, Machines: machines, ControlPlane: cpV}, policyFor(newV, names...), RolledFrom{})
	if len(steps) != 100 || !retry {
		t.Fatalf("steps = %d retry %v, want 100 and true", len(steps), retry)
	}
	if first, last := steps[0].Action.Target, steps[99].Action.Target; first != "pool-000" || last != "pool-099" {
		t.Fatalf("processed %s..%s, want pool-000..pool-099", first, last)
	}
	if steps[0].Patch == nil || steps[99].Action.Status != wire.StatusPending {
		t.Fatalf("first %+v last %+v, want pool-000 patched and the rest waiting", steps[0], steps[99].Action)
	}
	if names[0] != "pool-100" {
		t.Fatal("Plan reordered the caller's slice")
	}
}

// A name given twice must be refused even when its second copy sorts past
// the 100-pool cut: the duplicate check reads the whole list.
func TestUpgrade_DuplicateStraddlingThe100PoolCutIsRefused(t *testing.T) {
	var names []string
	mds := map[string]MD{}
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("pool-%03d", i)
		names = append(names, name)
		mds[name] = worker(name, newV, 0)
	}
	names = append(names, "pool-099") // 101st entry, the 100th name again
	steps, retry := Plan(Observed{MDs: mds, ControlPlane: cpV}, policyFor(newV, names...), RolledFrom{})
	want := []Step{{Action: report("pool-099", wire.StatusFailed,
		`pool "pool-099" is named more than once in the desired state; refusing to pick one`)}}
	if !reflect.DeepEqual(steps, want) || retry {
		t.Fatalf("Plan = %+v retry %v, want only the refusal", steps, retry)
	}
}
