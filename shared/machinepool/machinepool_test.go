package machinepool

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestMachinepool_CandidatesNamesEveryPoolThatCouldOwnTheMachine(t *testing.T) {
	r := NewResolver([]Claim{
		{Name: "workers", Selector: labels.SelectorFromSet(labels.Set{"role": "worker"})},
		{Name: "workers-big", Selector: labels.SelectorFromSet(labels.Set{"role": "worker", "size": "big"})},
		{Name: "prod-cp", Selector: nil},
	})
	cases := []struct {
		name   string
		labels map[string]string
		sets   []string
		want   []string
	}{
		{"one selector", map[string]string{"role": "worker"}, nil, []string{"workers"}},
		{"selector and owner agree", map[string]string{"role": "worker"}, []string{"workers-7d9f"}, []string{"workers"}},
		{"overlapping selectors", map[string]string{"role": "worker", "size": "big"}, nil, []string{"workers", "workers-big"}},
		{"selector and owner disagree", map[string]string{"role": "worker"}, []string{"prod-cp-5c4b"}, []string{"prod-cp", "workers"}},
		{"owner of no MD", nil, []string{"gone-5c4b"}, nil},
		{"nothing", nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Candidates(tc.labels, tc.sets); !slices.Equal(got, tc.want) {
				t.Errorf("Candidates = %v, want %v", got, tc.want)
			}
		})
	}
	// Resolve still picks one, as the observer's issue report needs.
	if got, ok := r.Resolve(map[string]string{"role": "worker"}, []string{"prod-cp-5c4b"}); !ok || got != "workers" {
		t.Errorf("Resolve = %q, %v; want the selector's match", got, ok)
	}
}

// Owners names the pools of the Machine's MachineSet owners, each by its
// MachineDeployment's whole name (workers-big's MachineSet is not workers'),
// and only pools that exist.
func TestMachinepool_OwnersNamesOnlyTheMachineSetOwnersPools(t *testing.T) {
	r := NewResolver([]Claim{
		{Name: "workers", Selector: labels.SelectorFromSet(labels.Set{"role": "worker"})},
		{Name: "workers-big", Selector: labels.SelectorFromSet(labels.Set{"role": "worker", "size": "big"})},
		{Name: "prod-cp", Selector: nil},
	})
	for _, tc := range []struct {
		sets []string
		want []string
	}{
		{[]string{"prod-cp-5c4b"}, []string{"prod-cp"}},
		{[]string{"workers-7d9f"}, []string{"workers"}},
		{[]string{"workers-big-7d9f"}, []string{"workers-big"}},
		{[]string{"workers-7d9f", "prod-cp-5c4b"}, []string{"workers", "prod-cp"}},
		{[]string{"gone-5c4b", "nodash"}, nil},
		{nil, nil},
	} {
		if got := r.Owners(tc.sets); !slices.Equal(got, tc.want) {
			t.Errorf("Owners(%v) = %v, want %v", tc.sets, got, tc.want)
		}
	}
}
