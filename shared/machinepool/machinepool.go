// Package machinepool maps a machine-controller Machine to the
// MachineDeployment (pool) that owns it. The observer files
// machine issues under the pool it finds; the actor refuses to heal a
// machine it cannot place, because deleting an unowned machine would lose
// the capacity for good. Both read a pool's replica counts with Int32.
package machinepool

import (
	"cmp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Claim is one MachineDeployment as resolution sees it: its name, and the
// selector by which it claims Machines. Selector is nil when spec.selector
// is absent, empty or unparsable.
type Claim struct {
	Name     string
	Selector labels.Selector
}

// Resolver places Machines in pools. Build it once per pass.
type Resolver struct {
	claiming []Claim         // non-nil selector, sorted by name
	exists   map[string]bool // every named MD, for the owner fallback
}

// NewResolver indexes the claims of one namespace's MachineDeployments.
func NewResolver(claims []Claim) Resolver {
	r := Resolver{exists: make(map[string]bool, len(claims))}
	for _, p := range claims {
		if p.Name == "" {
			continue
		}
		r.exists[p.Name] = true
		if p.Selector != nil {
			r.claiming = append(r.claiming, p)
		}
	}
	// Sorted so that overlapping selectors resolve the same way every pass.
	slices.SortFunc(r.claiming, func(a, b Claim) int { return cmp.Compare(a.Name, b.Name) })
	return r
}

// Resolve returns the owning MD's name: the first MD by name whose selector
// matches the Machine's labels, else the MD named after an owning MachineSet
// minus its last "-segment" (pool-a-6d8f9b7c4 → pool-a) if that MD exists.
// ok is false when nothing owns the machine.
func (r Resolver) Resolve(machineLabels map[string]string, machineSets []string) (name string, ok bool) {
	set := labels.Set(machineLabels)
	for _, p := range r.claiming {
		if p.Selector.Matches(set) {
			return p.Name, true
		}
	}
	for _, ms := range machineSets {
		i := strings.LastIndex(ms, "-")
		if i < 0 {
			continue
		}
		if md := ms[:i]; r.exists[md] {
			return md, true
		}
	}
	return "", false
}

// Candidates returns every pool the Machine could belong to, sorted: each MD
// whose selector matches its labels and the MD its MachineSet owner names.
// Resolve picks one by the contract's order; the actor, which deletes and
// rolls, treats a Machine with more than one candidate as owned by none,
// because overlapping selectors could make a control-plane or autoscaler
// pool's machine look like a worker pool's.
func (r Resolver) Candidates(machineLabels map[string]string, machineSets []string) []string {
	set := labels.Set(machineLabels)
	var out []string
	for _, p := range r.claiming {
		if p.Selector.Matches(set) {
			out = append(out, p.Name)
		}
	}
	out = append(out, r.Owners(machineSets)...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Owners returns the pools the Machine's MachineSet owners name, in the
// owners' order: the pools whose MachineSets may count the Machine among
// their replicas, whatever other selectors match it.
func (r Resolver) Owners(machineSets []string) []string {
	var out []string
	for _, ms := range machineSets {
		if i := strings.LastIndex(ms, "-"); i >= 0 && r.exists[ms[:i]] {
			out = append(out, ms[:i])
		}
	}
	return out
}

// Selector parses a MachineDeployment's spec.selector. An empty selector
// would match every machine, so it is nil, like an absent or broken one.
func Selector(md map[string]any) labels.Selector {
	raw, _, _ := unstructured.NestedFieldNoCopy(md, "spec", "selector")
	fields, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &ls); err != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

// MachineSets names a Machine's owners of kind MachineSet, the fallback's
// input; the owners' apiVersion is deliberately not checked.
func MachineSets(machine map[string]any) []string {
	refs, _, _ := unstructured.NestedFieldNoCopy(machine, "metadata", "ownerReferences")
	list, _ := refs.([]any)
	var out []string
	for _, r := range list {
		ref, ok := r.(map[string]any)
		if !ok {
			continue
		}
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		if kind == "MachineSet" && name != "" {
			out = append(out, name)
		}
	}
	return out
}
