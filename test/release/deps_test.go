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

// TestBinaries_LinkNoTestHelpers keeps the test-only packages
// (shared/testkit, kubeapi/kubeapitest) and the standard testing package,
// which they import, out of both binaries: product code must never import them.
func TestBinaries_LinkNoTestHelpers(t *testing.T) {
	for _, module := range []string{"actor", "observer"} {
		for _, pkg := range linked(t, module) {
			ours := strings.HasPrefix(pkg, "kubehz.dev/agent/")
			if pkg == "testing" || ours && (strings.HasSuffix(pkg, "test") || strings.HasSuffix(pkg, "testkit")) {
				t.Errorf("the %s links %s", module, pkg)
			}
		}
	}
}

// apiPackages lists the k8s.io/api packages the main package in module
// links.
func apiPackages(t *testing.T, module string) []string {
	t.Helper()
	var found []string
	for _, pkg := range linked(t, module) {
		if strings.HasPrefix(pkg, "k8s.io/api/") {
			found = append(found, pkg)
		}
	}
	return found
}

// linked lists every package the main package in module links, built as
// its Dockerfile builds it.
func linked(t *testing.T, module string) []string {
	t.Helper()
	list := exec.Command("go", "list", "-deps", ".")
	list.Dir = filepath.Join(root(t), module)
	list.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v", module, err)
	}
	return strings.Fields(string(out))
}

// TestModules_BuildAloneWithTheVersionsTheTestsRan: the images build each
// module with GOWORK=off, the tests run in the workspace, and the workspace
// takes the highest version any module asks for. A module that asks for less
// than the test module would ship dependencies no test ran (as shared,
// observer and actor once did with golang.org/x/sys and protobuf), and its
// lone build would compile them all a second time.
func TestModules_BuildAloneWithTheVersionsTheTestsRan(t *testing.T) {
	for _, module := range []string{"shared", "observer", "actor", "test"} {
		alone, workspace := moduleVersions(t, module, "GOWORK=off"), moduleVersions(t, module)
		if len(alone) == 0 {
			t.Fatalf("%s: go list found no dependency modules: the check cannot fail", module)
		}
		for path, v := range alone {
			if workspace[path] != v {
				t.Errorf("%s alone builds %s %s; the workspace tests it with %q", module, path, v, workspace[path])
			}
		}
	}
}

// moduleVersions maps each dependency module that module's packages and
// their tests use to its version, under the given extra environment.
func moduleVersions(t *testing.T, module string, env ...string) map[string]string {
	t.Helper()
	list := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
	list.Dir = filepath.Join(root(t), module)
	list.Env = append(os.Environ(), env...)
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", module, err)
	}
	versions := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		// The repository's own modules are in the workspace and replaced by a
		// path when alone: neither has a version to compare.
		if path, v, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(path, "kubehz.dev/agent/") {
			versions[path] = v
		}
	}
	return versions
}
