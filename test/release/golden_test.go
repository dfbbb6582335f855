package release

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/kube"
)

var update = flag.Bool("update", false, "rewrite the RBAC golden files from deploy/")

// TestRBAC_MatchesTheGoldenFiles renders each tier and compares every
// permission-bearing object with a checked-in golden file, so any change to
// what the agent may do shows up as a reviewed diff of testdata/, not only
// as a comment in a manifest. Regenerate with
// `go test ./release -run Golden -update` and read the diff.
func TestRBAC_MatchesTheGoldenFiles(t *testing.T) {
	for _, tier := range []string{"observer", "actor", "register"} {
		t.Run(tier, func(t *testing.T) {
			objs, err := kube.Render(filepath.Join(root(t), "deploy", tier))
			if err != nil {
				t.Fatal(err)
			}
			var docs []string
			for _, o := range objs {
				switch o.GetKind() {
				// An admission policy narrows what RBAC allows, so a change
				// to it is a change of permission too.
				case "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
					"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
				default:
					continue
				}
				// Labels are packaging, not permission.
				o.SetLabels(nil)
				b, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				docs = append(docs, string(b))
			}
			sort.Strings(docs)
			got := strings.Join(docs, "---\n")
			path := filepath.Join("testdata", "rbac-"+tier+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("deploy/%s RBAC differs from %s; if the change is meant, rerun with -update and review the diff.\ngot:\n%s", tier, path, got)
			}
		})
	}
}
