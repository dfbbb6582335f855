package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestObserver_LinksNoAPITypesPackage holds the README's sizing promise: the
// observer reads its few kinds through shared/kubeapi, and linking any
// k8s.io/api package (core/v1 alone registers every core kind) would put
// megabytes back into its resident memory. The actor, which links them
// through tools/leaderelection, shows the check can fail.
func TestObserver_LinksNoAPITypesPackage(t *testing.T) {
	if got := apiPackages(t, "actor"); len(got) == 0 {
		t.Fatal("the actor links no k8s.io/api package either: the check cannot fail")
	}
	if got := apiPackages(t, "observer"); len(got) > 0 {
		t.Errorf("the observer links %v", got)
	}
}

// apiPackages lists the k8s.io/api packages the main package in module
// links, built as its Dockerfile builds it.
func apiPackages(t *testing.T, module string) []string {
	t.Helper()
	list := exec.Command("go", "list", "-deps", ".")
	list.Dir = filepath.Join(root(t), module)
	list.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v", module, err)
	}
	var found []string
	for pkg := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/api/") {
			found = append(found, pkg)
		}
	}
	return found
}
