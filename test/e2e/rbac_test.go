package e2e

import (
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestObserverRBAC_ExactlyWhatItNeeds asks the apiserver, by
// SubjectAccessReview, what the kubehz-observer ServiceAccount may do with
// the RBAC from deploy/observer. Its only write is patch on
// clusterinventories/status.
func TestObserverRBAC_ExactlyWhatItNeeds(t *testing.T) {
	type access struct {
		name string
		ra   *authorizationv1.ResourceAttributes
		nra  *authorizationv1.NonResourceAttributes
	}
	allowed := []access{
		{"list nodes", res("list", "", "nodes", "", "", ""), nil},
		{"watch nodes", res("watch", "", "nodes", "", "", ""), nil},
		{"get node", res("get", "", "nodes", "", "", "n1"), nil},
		{"list pods", res("list", "", "pods", "", "", ""), nil},
		{"watch pods", res("watch", "", "pods", "", "", ""), nil},
		{"list events", res("list", "", "events", "", "", ""), nil},
		{"watch events", res("watch", "", "events", "", "", ""), nil},
		{"get token secret", res("get", "", "secrets", "", "kubehz-system", "kubehz-agent"), nil},
		{"get /version", nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/version"}},
		{"get /readyz", nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/readyz"}},
		{"list CSRs", res("list", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), nil},
		{"watch CSRs", res("watch", "certificates.k8s.io", "certificatesigningrequests", "", "", ""), nil},
		{"get inventory", res("get", "lok8s.dev", "clusterinventories", "", "", "cluster"), nil},
		{"patch inventory status", res("patch", "lok8s.dev", "clusterinventories", "status", "", "cluster"), nil},
		{"list machines", res("list", "cluster.k8s.io", "machines", "", "kube-system", ""), nil},
		{"watch machines", res("watch", "cluster.k8s.io", "machines", "", "kube-system", ""), nil},
		{"list machinedeployments", res("list", "cluster.k8s.io", "machinedeployments", "", "kube-system", ""), nil},
		{"watch machinedeployments", res("watch", "cluster.k8s.io", "machinedeployments", "", "kube-system", ""), nil},
		{"get owner marker", res("get", "", "configmaps", "", "kubehz-system", "kubehz-agent-config"), nil},
		{"watch owner marker", res("watch", "", "configmaps", "", "kubehz-system", "kubehz-agent-config"), nil},
	}
	denied := []access{
		{"list secrets", res("list", "", "secrets", "", "kubehz-system", ""), nil},
		{"watch secrets", res("watch", "", "secrets", "", "kubehz-system", ""), nil},
		{"get another secret", res("get", "", "secrets", "", "kubehz-system", "other"), nil},
		{"get token secret elsewhere", res("get", "", "secrets", "", "default", "kubehz-agent"), nil},
		{"pods/log", res("get", "", "pods", "log", "default", "p"), nil},
		{"pods/exec", res("create", "", "pods", "exec", "default", "p"), nil},
		{"pods/exec get", res("get", "", "pods", "exec", "default", "p"), nil},
		{"pods/portforward", res("create", "", "pods", "portforward", "default", "p"), nil},
		{"nodes/proxy", res("get", "", "nodes", "proxy", "", "n1"), nil},
		{"list configmaps", res("list", "", "configmaps", "", "kubehz-system", ""), nil},
		{"list deployments", res("list", "apps", "deployments", "", "", ""), nil},
		{"list machines elsewhere", res("list", "cluster.k8s.io", "machines", "", "default", ""), nil},
		{"list machinesets", res("list", "cluster.k8s.io", "machinesets", "", "kube-system", ""), nil},
		{"watch other configmaps", res("watch", "", "configmaps", "", "kubehz-system", ""), nil},
		{"get /metrics", nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}},
		{"update inventory status", res("update", "lok8s.dev", "clusterinventories", "status", "", "cluster"), nil},
		{"list inventories", res("list", "lok8s.dev", "clusterinventories", "", "", ""), nil},
		{"watch inventories", res("watch", "lok8s.dev", "clusterinventories", "", "", ""), nil},
		{"get another inventory", res("get", "lok8s.dev", "clusterinventories", "", "", "other"), nil},
		{"patch another inventory's status", res("patch", "lok8s.dev", "clusterinventories", "status", "", "other"), nil},
		{"approve CSRs", res("update", "certificates.k8s.io", "certificatesigningrequests", "approval", "", "x"), nil},
	}
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		for _, r := range []struct{ group, resource, sub, ns string }{
			{"", "nodes", "", ""}, {"", "nodes", "status", ""}, {"", "pods", "", "default"}, {"", "pods", "eviction", "default"},
			{"", "events", "", "default"}, {"", "secrets", "", "kubehz-system"}, {"", "configmaps", "", "kubehz-system"},
			{"apps", "deployments", "", "kubehz-system"}, {"rbac.authorization.k8s.io", "clusterroles", "", ""},
			{"coordination.k8s.io", "leases", "", "kubehz-system"},
			{"lok8s.dev", "clusterinventories", "", ""},
			{"cluster.k8s.io", "machines", "", "kube-system"}, {"cluster.k8s.io", "machinedeployments", "", "kube-system"},
			{"certificates.k8s.io", "certificatesigningrequests", "", ""},
		} {
			denied = append(denied, access{verb + " " + r.resource + "/" + r.sub, res(verb, r.group, r.resource, r.sub, r.ns, ""), nil})
		}
	}
	check := func(list []access, want bool) {
		for _, a := range list {
			got, err := suite.env.ServiceAccountCan(ctxT(t), "kubehz-system", "kubehz-observer", a.ra, a.nra)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: allowed=%v, want %v", a.name, got, want)
			}
		}
	}
	check(allowed, true)
	check(denied, false)
}

// TestObserverRBAC_NoWriteOnAnyServedResource walks every resource and
// subresource the apiserver serves, so a write slipped in through a new
// rule on any resource fails here, not only on the ones listed above.
func TestObserverRBAC_NoWriteOnAnyServedResource(t *testing.T) {
	writesOnlyOn(t, "kubehz-observer", map[string]bool{"patch lok8s.dev/clusterinventories/status in \"\"": true})
}

// TestActorRBAC_WritesOnlyWhatItNeeds is the same walk for the actor: the
// only writes are updates of its own Lease and reports ConfigMap (both
// shipped by deploy/actor, so no create), Events in the MD namespace, patch
// on MachineDeployments there, delete on Machines there (healing) and delete
// on pods (the eviction unwedge). It reads only what its capabilities read.
func TestActorRBAC_WritesOnlyWhatItNeeds(t *testing.T) {
	writesOnlyOn(t, "kubehz-actor", map[string]bool{
		"patch cluster.k8s.io/machinedeployments in \"kube-system\"": true,
		"create /events in \"kube-system\"":                          true,
		"delete cluster.k8s.io/machines in \"kube-system\"":          true,
		"delete /pods in \"kubehz-system\"":                          true,
		"delete /pods in \"kube-system\"":                            true,
		"delete /pods in \"default\"":                                true,
	})
	named := []struct {
		verb, group, resource, name string
		want                        bool
	}{
		{"update", "coordination.k8s.io", "leases", "kubehz-actor", true},
		{"update", "coordination.k8s.io", "leases", "other", false},
		{"update", "", "configmaps", "kubehz-actions", true},
		{"update", "", "configmaps", "kubehz-agent-config", false},
		{"watch", "apps", "deployments", "actor", true},
		{"watch", "apps", "deployments", "observer", false},
		{"get", "", "secrets", "kubehz-agent", true},
		{"list", "", "secrets", "", false},
		{"create", "", "configmaps", "kubehz-agent-config", false},
		{"create", "", "configmaps", "", false},
		{"create", "coordination.k8s.io", "leases", "", false},
		{"update", "", "configmaps", "kubehz-agent-config", false},
	}
	for _, n := range named {
		got, err := suite.env.ServiceAccountCan(ctxT(t), "kubehz-system", "kubehz-actor", res(n.verb, n.group, n.resource, "", "kubehz-system", n.name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != n.want {
			t.Errorf("%s %s/%s %q: allowed=%v, want %v", n.verb, n.group, n.resource, n.name, got, n.want)
		}
	}
	for _, c := range []struct {
		ra   *authorizationv1.ResourceAttributes
		want bool
	}{
		// What healing and upgrades read.
		{res("list", "cluster.k8s.io", "machines", "", "kube-system", ""), true},
		{res("watch", "cluster.k8s.io", "machines", "", "kube-system", ""), true},
		{res("list", "", "nodes", "", "", ""), true},
		{res("get", "", "nodes", "", "", "n1"), true},
		{res("list", "", "pods", "", "", ""), true},
		// The upgrade gate's sources: control-plane Nodes (above) and the
		// kube-apiserver static pods in kube-system.
		{res("list", "", "pods", "", "kube-system", ""), true},
		// And nothing more: the unwedge lists pods by node, the upgrade
		// gate lists kube-apiserver pods, and neither reads one, watches
		// them or evicts; Machines elsewhere, their creation and their
		// MachineSets are out of reach.
		{res("get", "", "pods", "", "default", "p"), false},
		{res("watch", "", "pods", "", "", ""), false},
		{res("create", "", "pods", "eviction", "default", "p"), false},
		{res("delete", "cluster.k8s.io", "machines", "", "default", "x"), false},
		{res("list", "cluster.k8s.io", "machines", "", "default", ""), false},
		{res("create", "cluster.k8s.io", "machines", "", "kube-system", ""), false},
		{res("update", "cluster.k8s.io", "machines", "", "kube-system", "x"), false},
		{res("delete", "cluster.k8s.io", "machinedeployments", "", "kube-system", "x"), false},
		{res("create", "cluster.k8s.io", "machinedeployments", "", "kube-system", ""), false},
		{res("list", "cluster.k8s.io", "machinesets", "", "kube-system", ""), false},
		{res("update", "", "nodes", "", "", "n1"), false},
		{res("delete", "", "nodes", "", "", "n1"), false},
	} {
		got, err := suite.env.ServiceAccountCan(ctxT(t), "kubehz-system", "kubehz-actor", c.ra, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %s/%s in %q: allowed=%v, want %v", c.ra.Verb, c.ra.Resource, c.ra.Subresource, c.ra.Namespace, got, c.want)
		}
	}
}

// writesOnlyOn checks, by SubjectAccessReview over every served resource,
// that the ServiceAccount can write nothing but the allowed accesses
// (written "verb group/resource[/sub] in \"namespace\"").
func writesOnlyOn(t *testing.T, sa string, allowed map[string]bool) {
	t.Helper()
	lists, err := suite.env.Client.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			resource, sub, _ := strings.Cut(r.Name, "/")
			if strings.HasPrefix(resource, "selfsubject") {
				// Every authenticated identity may ask what it itself may do
				// (Kubernetes' default system:basic-user role); these
				// "creates" persist nothing.
				continue
			}
			namespaces := []string{""}
			if r.Namespaced {
				namespaces = []string{"kubehz-system", "kube-system", "default"}
			}
			for _, ns := range namespaces {
				for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
					key := fmt.Sprintf("%s %s/%s in %q", verb, gv.Group, r.Name, ns)
					ok, err := suite.env.ServiceAccountCan(ctxT(t), "kubehz-system", sa, res(verb, gv.Group, resource, sub, ns, ""), nil)
					if err != nil {
						t.Fatal(err)
					}
					if ok && !allowed[key] {
						t.Errorf("%s may %s", sa, key)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d write accesses checked for %s", checked, sa)
}

func res(verb, group, resource, sub, ns, name string) *authorizationv1.ResourceAttributes {
	return &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}
