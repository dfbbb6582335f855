package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployments_ShipWhatTheREADMEsSizingSays holds the README's sizing
// promise: both Deployments ship with the requests and limits of the row
// marked "(as shipped)", a CPU request of 10m and no CPU limit, so the
// table and the manifests cannot drift apart. They also cap Go at the two
// threads the table was measured with: without it Go sizes itself to the
// node's CPUs, and the agents weigh more on a big node than the table says.
func TestDeployments_ShipWhatTheREADMEsSizingSays(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.Lines(string(readme)) {
		if strings.HasPrefix(line, "|") && strings.Contains(line, "(as shipped)") {
			row = line
		}
	}
	cells := strings.Split(strings.Trim(strings.TrimSpace(row), "|"), "|")
	if len(cells) != 3 {
		t.Fatalf("no sizing row marked (as shipped) with three cells in the README: %q", row)
	}
	if !strings.Contains(string(readme), "Both set `GOMAXPROCS=2`") {
		t.Error("the README's Sizing no longer says both Deployments set GOMAXPROCS=2")
	}
	quantities := regexp.MustCompile(`(\d+Mi)\D*/\s*(\d+Mi)`)
	for i, d := range []struct{ dir, name string }{{"observer", "observer"}, {"actor", "actor"}} {
		want := quantities.FindStringSubmatch(cells[i+1])
		if want == nil {
			t.Fatalf("README's %s cell %q is not request / limit", d.name, cells[i+1])
		}
		_, deploy := renderDeployment(t, d.dir, d.name)
		res := deploy.Spec.Template.Spec.Containers[0].Resources
		if got := res.Requests.Memory().String(); got != want[1] {
			t.Errorf("%s requests %s of memory, the README %s", d.name, got, want[1])
		}
		if got := res.Limits.Memory().String(); got != want[2] {
			t.Errorf("%s is limited to %s of memory, the README %s", d.name, got, want[2])
		}
		if got := res.Requests.Cpu().String(); got != "10m" {
			t.Errorf("%s requests %s of CPU, the README 10m", d.name, got)
		}
		if _, ok := res.Limits["cpu"]; ok {
			t.Errorf("%s has a CPU limit, which the README says it has not", d.name)
		}
		procs := "unset"
		for _, e := range deploy.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMAXPROCS" {
				procs = e.Value
			}
		}
		if procs != "2" {
			t.Errorf("%s has GOMAXPROCS %s, the README 2", d.name, procs)
		}
	}
}
