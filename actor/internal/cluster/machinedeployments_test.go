package cluster

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/informer"
)

func TestTransform_ReadsWhatTheDecisionsNeed(t *testing.T) {
	full := machineDeployment("kube-system", "pool-a", int64(3))
	full.SetResourceVersion("417")
	full.SetUID("0b6f5c1e-7d0a-4c53-9a51-3f0d3c1f9b2e")
	full.SetLabels(map[string]string{"team": "infra"})
	full.SetAnnotations(map[string]string{"cluster.k8s.io/cluster-api-autoscaler-node-group-min-size": "1"})
	full.Object["spec"].(map[string]any)["template"] = map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"node-role.kubernetes.io/master": ""}},
		"spec": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"pool": "pool-a"}},
			"labels":   map[string]any{"zone": "fsn1"},
		},
	}
	// A template label map of the wrong shape reads as absent rather than
	// failing the whole object.
	badTemplate := machineDeployment("kube-system", "pool-b", int64(1))
	badTemplate.Object["spec"].(map[string]any)["template"] = map[string]any{
		"metadata": map[string]any{"labels": "not a map"},
	}

	cases := []struct {
		name string
		in   *unstructured.Unstructured
		want *MachineDeployment
	}{
		{
			name: "every field read",
			in:   full,
			want: &MachineDeployment{
				Namespace: "kube-system", Name: "pool-a", ResourceVersion: "417",
				UID:                    "0b6f5c1e-7d0a-4c53-9a51-3f0d3c1f9b2e",
				Replicas:               int64Ptr(3),
				Labels:                 map[string]string{"team": "infra"},
				Annotations:            map[string]string{"cluster.k8s.io/cluster-api-autoscaler-node-group-min-size": "1"},
				TemplateLabels:         map[string]string{"node-role.kubernetes.io/master": ""},
				TemplateSpecMetaLabels: map[string]string{"pool": "pool-a"},
				TemplateSpecLabels:     map[string]string{"zone": "fsn1"},
			},
		},
		{
			name: "replicas as float64",
			in:   machineDeployment("kube-system", "pool-a", float64(5)),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a", Replicas: int64Ptr(5)},
		},
		{
			name: "replicas zero is known, not missing",
			in:   machineDeployment("kube-system", "pool-a", int64(0)),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a", Replicas: int64Ptr(0)},
		},
		{
			name: "missing replicas is unknown",
			in:   machineDeployment("kube-system", "pool-a", nil),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "replicas that is not a whole number is unknown, not rounded",
			in:   machineDeployment("kube-system", "pool-a", 2.5),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "negative replicas is unknown",
			in:   machineDeployment("kube-system", "pool-a", int64(-1)),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "replicas past int32 is unknown",
			in:   machineDeployment("kube-system", "pool-a", int64(2147483648)),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "replicas of 1e300 is unknown",
			in:   machineDeployment("kube-system", "pool-a", 1e300),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "the largest int32 is a count",
			in:   machineDeployment("kube-system", "pool-a", float64(2147483647)),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a", Replicas: int64Ptr(2147483647)},
		},
		{
			name: "replicas of another type is unknown",
			in:   machineDeployment("kube-system", "pool-a", "3"),
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-a"},
		},
		{
			name: "a template label map of the wrong shape is absent",
			in:   badTemplate,
			want: &MachineDeployment{Namespace: "kube-system", Name: "pool-b", Replicas: int64Ptr(1)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transform(tc.in)
			if err != nil {
				t.Fatalf("transform: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("record:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTransform_ReadsTheRolloutStrategy(t *testing.T) {
	bound := func(v intstr.IntOrString) *intstr.IntOrString { return &v }
	cases := []struct {
		name     string
		strategy any // nil: no spec.strategy at all
		want     upgrade.Rollout
	}{
		{"absent", nil, upgrade.Rollout{}},
		{"counts and a type", map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{
			"maxSurge": int64(0), "maxUnavailable": int64(2)}},
			upgrade.Rollout{Type: "RollingUpdate", MaxSurge: bound(intstr.FromInt32(0)), MaxUnavailable: bound(intstr.FromInt32(2))}},
		{"a percentage", map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "25%"}},
			upgrade.Rollout{MaxUnavailable: bound(intstr.FromString("25%"))}},
		{"no rollingUpdate", map[string]any{"type": "RollingUpdate"}, upgrade.Rollout{Type: "RollingUpdate"}},
		{"not an object", "RollingUpdate", upgrade.Rollout{Unreadable: true}},
		{"a bound of the wrong kind", map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": map[string]any{"n": int64(1)}}},
			upgrade.Rollout{Unreadable: true}},
		{"a count past int32", map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": int64(1) << 40}},
			upgrade.Rollout{Unreadable: true}},
	}
	for _, tc := range cases {
		u := machineDeployment("kube-system", "pool-a", int64(4))
		if tc.strategy != nil {
			u.Object["spec"].(map[string]any)["strategy"] = tc.strategy
		}
		if got := machineDeploymentFrom(u).Rollout; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Rollout = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestTransform_IsIdempotent(t *testing.T) {
	once, err := transform(machineDeployment("kube-system", "pool-a", int64(2)))
	if err != nil {
		t.Fatalf("first transform: %v", err)
	}
	twice, err := transform(once)
	if err != nil {
		t.Fatalf("second transform: %v", err)
	}
	if twice != once {
		t.Errorf("a record transformed again became %+v, want the same record %+v", twice, once)
	}
}

func TestTransform_RewrapsTombstones(t *testing.T) {
	record, err := transform(machineDeployment("kube-system", "pool-a", int64(2)))
	if err != nil {
		t.Fatalf("transform: %v", err)
	}
	cases := []struct {
		name    string
		in      any
		want    any
		wantErr error
	}{
		{
			name: "a tombstone of an object holds its record",
			in:   cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a", Obj: machineDeployment("kube-system", "pool-a", int64(2))},
			want: cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a", Obj: record},
		},
		{
			name: "a tombstone of a record is kept",
			in:   cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a", Obj: record},
			want: cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a", Obj: record},
		},
		{
			name: "an empty tombstone is kept",
			in:   cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a"},
			want: cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a"},
		},
		{
			name:    "a tombstone of something else is refused",
			in:      cache.DeletedFinalStateUnknown{Key: "kube-system/pool-a", Obj: "pool-a"},
			wantErr: informer.ErrUnexpected,
		},
		{name: "something else is refused", in: 42, wantErr: informer.ErrUnexpected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transform(tc.in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("transformed:\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestTransform_ControlPlaneKeySurvivesANonStringLabelValue: a label map
// with one odd value must not hide its control-plane key (fail closed).
func TestTransform_ControlPlaneKeySurvivesANonStringLabelValue(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "pool-x", "namespace": "kube-system"},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{
			"node-role.kubernetes.io/control-plane": "", "odd": int64(7),
		}}}},
	}}
	r := machineDeploymentFrom(u)
	if _, ok := r.TemplateLabels["node-role.kubernetes.io/control-plane"]; !ok {
		t.Fatalf("template labels %v lost the control-plane key", r.TemplateLabels)
	}
}

// Get and Fresh read past the cache: the stopped cache below has never
// listed, yet both see the apiserver's objects, and a missing
// MachineDeployment is no error.
func TestMachineDeployments_GetAndFreshReadTheAPIServer(t *testing.T) {
	client := newFakeDynamic(machineDeployment(testNamespace, "pool-a", int64(2)))
	c := newMDCache(client)
	got, err := c.Get(t.Context(), "pool-a")
	if err != nil || got == nil || got.Name != "pool-a" || got.Replicas == nil || *got.Replicas != 2 {
		t.Fatalf("Get(pool-a) = %+v, %v; want its record", got, err)
	}
	if got, err := c.Get(t.Context(), "absent"); got != nil || err != nil {
		t.Errorf("Get(absent) = %+v, %v; want nil, nil", got, err)
	}
	all, err := c.Fresh(t.Context())
	if err != nil || len(all) != 1 || all["pool-a"] == nil {
		t.Errorf("Fresh = %v, %v; want pool-a by name", all, err)
	}
	if c.List() != nil {
		t.Error("List of a stopped cache is not nil after direct reads")
	}

	client.PrependReactor("get", "machinedeployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(MachineDeploymentGVR.GroupResource(), "pool-a", errors.New("no"))
	})
	_, err = c.Get(t.Context(), "pool-a")
	if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), "get MachineDeployment kube-system/pool-a: ") {
		t.Errorf("Get refused = %v, want the Forbidden wrapped with the namespace/name", err)
	}
}
