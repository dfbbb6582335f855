package health

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/wire"
)

func staticPod(name, component string, phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name,
			Labels: map[string]string{"component": component, "tier": "control-plane"}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: ready},
		}},
	}
}

func up(name string) wire.Component   { return wire.Component{Name: name, Status: Healthy} }
func down(name string) wire.Component { return wire.Component{Name: name, Status: Unhealthy} }

func TestPodFrom_KeepsComponentPhaseAndReadiness(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want *Pod
	}{
		{name: "running and ready", pod: staticPod("kube-scheduler-ctl-a", "kube-scheduler", corev1.PodRunning, corev1.ConditionTrue),
			want: &Pod{Namespace: "kube-system", Name: "kube-scheduler-ctl-a", Component: "kube-scheduler", Phase: "Running", Ready: true}},
		{name: "ready unknown", pod: staticPod("kube-scheduler-ctl-a", "kube-scheduler", corev1.PodRunning, corev1.ConditionUnknown),
			want: &Pod{Namespace: "kube-system", Name: "kube-scheduler-ctl-a", Component: "kube-scheduler", Phase: "Running"}},
		{name: "no conditions, no labels", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "x"},
			Status: corev1.PodStatus{Phase: corev1.PodPending}},
			want: &Pod{Namespace: "kube-system", Name: "x", Phase: "Pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodFrom(kubeapitest.MustConvert[*kubeapi.Pod](tt.pod)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPodTransform_IsIdempotentAndUnwrapsTombstones(t *testing.T) {
	rec, err := podTransform(kubeapitest.MustConvert[*kubeapi.Pod](staticPod("kube-scheduler-ctl-a", "kube-scheduler", corev1.PodRunning, corev1.ConditionTrue)))
	if err != nil {
		t.Fatal(err)
	}
	again, err := podTransform(rec)
	if err != nil || again != rec {
		t.Fatalf("second pass = %v, %v; want the same record", again, err)
	}
	tomb, err := podTransform(cache.DeletedFinalStateUnknown{Key: "kube-system/x",
		Obj: kubeapitest.MustConvert[*kubeapi.Pod](staticPod("x", "kube-scheduler", corev1.PodRunning, corev1.ConditionFalse))})
	if err != nil {
		t.Fatal(err)
	}
	want := cache.DeletedFinalStateUnknown{Key: "kube-system/x",
		Obj: &Pod{Namespace: "kube-system", Name: "x", Component: "kube-scheduler", Phase: "Running"}}
	if !reflect.DeepEqual(tomb, want) {
		t.Errorf("tombstone = %+v, want %+v", tomb, want)
	}
	if _, err := podTransform("not a pod"); err == nil {
		t.Error("a foreign object was accepted")
	}
}

func TestControlPlane_DecidesEachComponentAndOmitsTheUnknown(t *testing.T) {
	sched := func(name, phase string, ready bool) *Pod {
		return &Pod{Namespace: "kube-system", Name: name, Component: "kube-scheduler", Phase: phase, Ready: ready}
	}
	cm := func(name, phase string, ready bool) *Pod {
		return &Pod{Namespace: "kube-system", Name: name, Component: "kube-controller-manager", Phase: phase, Ready: ready}
	}
	passing := &Readyz{Passed: true, Checks: map[string]bool{"ping": true, "etcd": true}}
	tests := []struct {
		name   string
		readyz *Readyz
		pods   []*Pod
		want   []wire.Component
	}{
		{name: "nothing known", want: nil},
		{name: "all healthy, sorted", readyz: passing,
			pods: []*Pod{sched("kube-scheduler-ctl-a", "Running", true), cm("kube-controller-manager-ctl-a", "Running", true)},
			want: []wire.Component{up("apiserver"), up("controller-manager"), up("etcd"), up("scheduler")}},
		{name: "etcd failing fails the apiserver too",
			readyz: &Readyz{Checks: map[string]bool{"ping": true, "etcd": false}},
			want:   []wire.Component{down("apiserver"), down("etcd")}},
		{name: "apiserver failing on another check keeps etcd healthy",
			readyz: &Readyz{Checks: map[string]bool{"etcd": true, "shutdown": false}},
			want:   []wire.Component{down("apiserver"), up("etcd")}},
		{name: "no etcd check omits etcd", readyz: &Readyz{Passed: true, Checks: map[string]bool{"ping": true}},
			want: []wire.Component{up("apiserver")}},
		{name: "readyz probe failed: static pods only",
			pods: []*Pod{sched("kube-scheduler-ctl-a", "Running", true)},
			want: []wire.Component{up("scheduler")}},
		{name: "one ready pod of three is enough", readyz: passing,
			pods: []*Pod{sched("kube-scheduler-ctl-a", "Running", false), sched("kube-scheduler-ctl-b", "Running", true),
				sched("kube-scheduler-ctl-c", "Pending", false)},
			want: []wire.Component{up("apiserver"), up("etcd"), up("scheduler")}},
		{name: "pods present, none ready", readyz: passing,
			pods: []*Pod{sched("kube-scheduler-ctl-a", "Running", false), cm("kube-controller-manager-ctl-a", "Pending", false)},
			want: []wire.Component{up("apiserver"), down("controller-manager"), up("etcd"), down("scheduler")}},
		{name: "ready but not running is not healthy",
			pods: []*Pod{cm("kube-controller-manager-ctl-a", "Succeeded", true)},
			want: []wire.Component{down("controller-manager")}},
		{name: "other components are ignored",
			pods: []*Pod{{Namespace: "kube-system", Name: "etcd-ctl-a", Component: "etcd", Phase: "Running", Ready: true},
				{Namespace: "kube-system", Name: "kube-apiserver-ctl-a", Component: "kube-apiserver", Phase: "Running"}},
			want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ControlPlane(tt.readyz, tt.pods); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}
