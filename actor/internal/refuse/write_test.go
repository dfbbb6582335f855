package refuse

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/wire"
)

// A Forbidden write's detail leads with the missing rule, so the wire's 256
// code point cap cuts the apiserver's long text and never the rule.
func TestRefuse_ForbiddenWriteLeadsWithTheRuleAndSurvivesTheWireCap(t *testing.T) {
	err := apierrors.NewForbidden(schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}, "pool-a",
		errors.New(`User "system:serviceaccount:kubehz-system:kubehz-actor" cannot patch resource "machinedeployments" in API group "cluster.k8s.io" in the namespace "kube-system"`))
	rule := MDPatchRule("kube-system")
	got := WriteFailed("patch", err, rule)
	if want := "patch failed: RBAC: " + rule + ": "; !strings.HasPrefix(got, want) {
		t.Fatalf("detail %q does not start with %q", got, want)
	}
	if onWire := wire.Clamp(got, 256); !strings.Contains(onWire, `namespace "kube-system"`) {
		t.Errorf("the wire's cut %q lost the namespace", onWire)
	}
	if got := WriteFailed("delete", errors.New("connection\nrefused"), rule); got != "delete failed: connection refused" {
		t.Errorf("plain error detail %q", got)
	}
}

// A write counts as landed unless the fence held it back or the apiserver
// refused it outright: no answer, a 5xx and a timeout leave it open.
func TestMayHaveLanded_OnlyADefiniteRefusalOrAHeldWriteRulesItOut(t *testing.T) {
	gr := schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}
	for _, tc := range []struct {
		name string
		sent bool
		err  error
		want bool
	}{
		{"answered with success", true, nil, true},
		{"no answer", true, errors.New("http2: client connection lost"), true},
		{"a 500", true, apierrors.NewInternalError(errors.New("etcd")), true},
		{"a server timeout", true, apierrors.NewServerTimeout(gr, "patch", 1), true},
		{"a 409", true, apierrors.NewConflict(gr, "pool-a", errors.New("modified")), false},
		{"a 403", true, apierrors.NewForbidden(gr, "pool-a", errors.New("denied")), false},
		{"a 404", true, apierrors.NewNotFound(gr, "pool-a"), false},
		{"held back by the fence", false, errors.New("lost lease"), false},
	} {
		if got := MayHaveLanded(tc.sent, tc.err); got != tc.want {
			t.Errorf("%s: MayHaveLanded = %v, want %v", tc.name, got, tc.want)
		}
	}
}
