package machines

import (
	"reflect"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// The resolution order of docs/contract.md#machine-pools.
func TestResolve_SelectorFirstThenOwnerFallbackOnlyToExistingMD(t *testing.T) {
	everything := DeploymentFrom(obj(t, `{"metadata":{"name":"aaa-catch-all"},"spec":{"selector":{}}}`))
	noSelector := DeploymentFrom(obj(t, `{"metadata":{"name":"pool-c"}}`))
	broad := DeploymentFrom(obj(t, `{"metadata":{"name":"pool-0"},
		"spec":{"selector":{"matchExpressions":[{"key":"pool","operator":"Exists"}]}}}`))
	mds := []*MachineDeployment{pool(t, "pool-b"), pool(t, "pool-a"), everything, noSelector}

	tests := []struct {
		name     string
		mds      []*MachineDeployment
		machine  *Machine
		wantPool string
		wantOK   bool
	}{
		{"a selector match wins", mds,
			&Machine{Labels: in("pool-b"), MachineSets: []string{"pool-a-6d8f9b7c4"}}, "pool-b", true},
		{"overlapping selectors: the first MD by name wins", append([]*MachineDeployment{broad}, mds...),
			&Machine{Labels: in("pool-b")}, "pool-0", true},
		{"an MD with an empty selector never claims a machine", mds,
			&Machine{Labels: map[string]string{"other": "x"}}, "", false},
		{"the ownerRef fallback works when the derived MD exists", mds,
			&Machine{MachineSets: []string{"pool-c-6d8f9b7c4"}}, "pool-c", true},
		{"the ownerRef fallback strips only the last segment", mds,
			&Machine{MachineSets: []string{"pool-a-x-6d8f9b7c4"}}, "", false},
		{"the ownerRef fallback refuses an MD that does not exist", mds,
			&Machine{MachineSets: []string{"pool-z-6d8f9b7c4"}}, "", false},
		{"a MachineSet name without a dash gives nothing", mds,
			&Machine{MachineSets: []string{"poolc"}}, "", false},
		{"a later owner may resolve", mds,
			&Machine{MachineSets: []string{"gone-1", "pool-a-2"}}, "pool-a", true},
		{"no MDs: unresolved", nil, &Machine{Labels: in("pool-a"), MachineSets: []string{"pool-a-1"}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := newResolver(tt.mds).pool(tt.machine)
			if got != tt.wantPool || ok != tt.wantOK {
				t.Errorf("pool = %q, %v; want %q, %v", got, ok, tt.wantPool, tt.wantOK)
			}
		})
	}
}

func TestPools_OnePerMDSortedByNameWithAPIGroup(t *testing.T) {
	b := DeploymentFrom(obj(t, `{"metadata":{"name":"workers-b"},"spec":{"replicas":3},"status":{"readyReplicas":2,"replicas":3}}`))
	a := DeploymentFrom(obj(t, `{"metadata":{"name":"workers-a"},"spec":{"replicas":1}}`))
	got := Pools([]*MachineDeployment{b, nil, a})
	want := []wire.Pool{
		{Name: "workers-a", Replicas: 1, Ready: 0, APIGroup: "cluster.k8s.io"},
		{Name: "workers-b", Replicas: 3, Ready: 2, APIGroup: "cluster.k8s.io"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Pools = %+v\nwant %+v", got, want)
	}
	if got := Pools(nil); got != nil {
		t.Errorf("Pools(nil) = %#v, want nil", got)
	}
}
