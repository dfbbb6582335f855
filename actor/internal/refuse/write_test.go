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
