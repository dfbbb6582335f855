package release

import (
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubehz.dev/agent/test/kube"
)

// TestObserverRBAC_OnlyWriteIsInventoryStatus reads every rule deploy/observer
// grants: everything is get/list/watch except one patch, on
// clusterinventories/status. A new write must change this test on purpose.
func TestObserverRBAC_OnlyWriteIsInventoryStatus(t *testing.T) {
	objs, err := kube.Render(filepath.Join(root(t), "deploy", "observer"))
	if err != nil {
		t.Fatal(err)
	}
	read := []string{"get", "list", "watch"}
	writes := 0
	for _, o := range objs {
		if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole // same rules shape as Role
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v == "*" {
					t.Errorf("%s %s grants every verb", o.GetKind(), o.GetName())
				}
				if slices.Contains(read, v) {
					continue
				}
				if v == "patch" && slices.Equal(r.APIGroups, []string{"lok8s.dev"}) && slices.Equal(r.Resources, []string{"clusterinventories/status"}) {
					writes++
					continue
				}
				t.Errorf("%s %s grants %q on %v %v", o.GetKind(), o.GetName(), v, r.APIGroups, r.Resources)
			}
			if slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
				t.Errorf("%s %s uses a wildcard", o.GetKind(), o.GetName())
			}
		}
	}
	if writes != 1 {
		t.Errorf("want exactly one write (patch clusterinventories/status), found %d", writes)
	}
}
