package cluster

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/testkit"
)

func TestRoles_KeySuffixesAndLegacyValueSortedOrWorker(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{
			name:   "empty-valued control-plane key gives control-plane",
			labels: map[string]string{"node-role.kubernetes.io/control-plane": ""},
			want:   "control-plane",
		},
		{
			name:   "master key gives master",
			labels: map[string]string{"node-role.kubernetes.io/master": ""},
			want:   "master",
		},
		{
			name:   "value of a role key is ignored",
			labels: map[string]string{"node-role.kubernetes.io/etcd": "false"},
			want:   "etcd",
		},
		{
			name:   "no role label gives worker",
			labels: map[string]string{"kubernetes.io/hostname": "wrk-b"},
			want:   "worker",
		},
		{
			name:   "nil labels give worker",
			labels: nil,
			want:   "worker",
		},
		{
			name: "multiple roles are sorted",
			labels: map[string]string{
				"node-role.kubernetes.io/etcd":          "",
				"node-role.kubernetes.io/control-plane": "",
			},
			want: "control-plane,etcd",
		},
		{
			name:   "legacy kubernetes.io/role value gives its value",
			labels: map[string]string{"kubernetes.io/role": "ingress"},
			want:   "ingress",
		},
		{
			name:   "empty legacy kubernetes.io/role value is ignored",
			labels: map[string]string{"kubernetes.io/role": ""},
			want:   "worker",
		},
		{
			name: "role named by both a key and the legacy label appears once",
			labels: map[string]string{
				"node-role.kubernetes.io/master": "",
				"kubernetes.io/role":             "master",
			},
			want: "master",
		},
		{
			name: "legacy value is sorted among key roles",
			labels: map[string]string{
				"node-role.kubernetes.io/control-plane": "",
				"kubernetes.io/role":                    "bastion",
			},
			want: "bastion,control-plane",
		},
		{
			name:   "bare prefix key is ignored",
			labels: map[string]string{"node-role.kubernetes.io/": ""},
			want:   "worker",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Roles(tt.labels); got != tt.want {
				t.Errorf("Roles(%v) = %q, want %q", tt.labels, got, tt.want)
			}
		})
	}
}

func TestReadiness_FromReadyConditionOnly(t *testing.T) {
	cond := func(typ corev1.NodeConditionType, s corev1.ConditionStatus) kubeapi.Condition {
		return kubeapi.Condition{Type: string(typ), Status: string(s)}
	}
	tests := []struct {
		name      string
		conds     []kubeapi.Condition
		wantState string
		wantReady bool
	}{
		{"True gives Ready", []kubeapi.Condition{cond(corev1.NodeReady, corev1.ConditionTrue)}, "Ready", true},
		{"False gives NotReady", []kubeapi.Condition{cond(corev1.NodeReady, corev1.ConditionFalse)}, "NotReady", false},
		{"Unknown gives Unknown", []kubeapi.Condition{cond(corev1.NodeReady, corev1.ConditionUnknown)}, "Unknown", false},
		{"empty status gives Unknown", []kubeapi.Condition{cond(corev1.NodeReady, "")}, "Unknown", false},
		{"nil conditions give Unknown", nil, "Unknown", false},
		{
			name:      "other conditions without Ready give Unknown",
			conds:     []kubeapi.Condition{cond(corev1.NodeMemoryPressure, corev1.ConditionFalse)},
			wantState: "Unknown",
		},
		{
			name: "Ready is found among other conditions",
			conds: []kubeapi.Condition{
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse),
				cond(corev1.NodeReady, corev1.ConditionTrue),
			},
			wantState: "Ready",
			wantReady: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, ready := readiness(tt.conds)
			if state != tt.wantState || ready != tt.wantReady {
				t.Errorf("readiness = (%q, %v), want (%q, %v)", state, ready, tt.wantState, tt.wantReady)
			}
		})
	}
}

func TestNodeFrom_TypedFieldsOnly(t *testing.T) {
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	tests := []struct {
		name string
		node *corev1.Node
		want *Node
	}{
		{
			name: "cloud node has instance type, kubelet version and capacity",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "ctl-a", Labels: map[string]string{
					"node-role.kubernetes.io/control-plane": "",
					"node.kubernetes.io/instance-type":      "cpx21",
				}},
				Status: corev1.NodeStatus{
					Conditions: ready,
					NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.35.5"},
					Capacity: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("4"),
						corev1.ResourceMemory: resource.MustParse("8148Mi"),
						corev1.ResourcePods:   resource.MustParse("110"),
					},
				},
			},
			want: &Node{
				Name: "ctl-a", Status: "Ready", Ready: true, Roles: "control-plane",
				InstanceType: "cpx21", KubeletVersion: "v1.35.5", CPU: "4", Memory: "8148Mi",
			},
		},
		{
			name: "worker without CCM has no instance type, no capacity and role worker",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "wrk-b"},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
				},
			},
			want: &Node{Name: "wrk-b", Status: "NotReady", Roles: "worker"},
		},
		{
			name: "legacy beta instance-type label is not read",
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wrk-c", Labels: map[string]string{
				"beta.kubernetes.io/instance-type": "cpx31",
			}}},
			want: &Node{Name: "wrk-c", Status: "Unknown", Roles: "worker"},
		},
		{
			name: "capacity keeps only the quantities present, canonically rendered",
			node: &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "wrk-d"},
				Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
					corev1.ResourceMemory: resource.MustParse("4096Ki"),
				}},
			},
			want: &Node{Name: "wrk-d", Status: "Unknown", Roles: "worker", Memory: "4Mi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NodeFrom(kubeapitest.MustConvert[*kubeapi.Node](tt.node)); *got != *tt.want {
				t.Errorf("NodeFrom =\n%+v, want\n%+v", *got, *tt.want)
			}
		})
	}
}

// A kubelet writes its own node's status and an admin any number of role
// labels: the record keeps no more than the beat sends (64 units of kubelet
// version and instance type, 253 of roles), and nothing of the long input.
func TestNodeFrom_KeepsNoMoreThanTheBeatSends(t *testing.T) {
	huge := strings.Repeat("v", 1<<20)
	labels := map[string]string{"node.kubernetes.io/instance-type": huge}
	for i := range 100 {
		labels[fmt.Sprintf("node-role.kubernetes.io/role-%03d", i)] = ""
	}
	n := kubeapitest.MustConvert[*kubeapi.Node](&corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "wrk-a", Labels: labels},
		Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: huge}},
	})
	got := NodeFrom(n)
	if len(got.KubeletVersion) != 64 || len(got.InstanceType) != 64 || len(got.Roles) != 253 {
		t.Errorf("kept kubelet %d, instance type %d, roles %d bytes; want 64, 64 and 253",
			len(got.KubeletVersion), len(got.InstanceType), len(got.Roles))
	}
	if testkit.Pins(got.KubeletVersion, n.Status.NodeInfo.KubeletVersion) {
		t.Error("the record's kubelet version keeps the node's megabyte alive")
	}
}
