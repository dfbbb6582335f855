package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestWorkflows_PinEveryActionByCommit reads every workflow: each `uses:`
// names a full commit SHA with the version as a comment, because a tag can
// be moved to code nobody reviewed.
func TestWorkflows_PinEveryActionByCommit(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows found (%v)", err)
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s*)?uses:\s*(.*)$`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v[0-9]+(\.[0-9]+)*$`)
	local := regexp.MustCompile(`^\./\.github/workflows/[\w.-]+\.yaml$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			// A workflow of this repository runs at the same commit.
			if local.MatchString(strings.TrimSpace(m[1])) {
				continue
			}
			if !pinned.MatchString(strings.TrimSpace(m[1])) {
				t.Errorf("%s: uses %q is not owner/repo@<commit SHA> # vX.Y.Z", filepath.Base(f), m[1])
			}
		}
	}
}

// TestReleaseWorkflow_LeastPrivilegeBothArchitectures reads release.yaml:
// it runs on version tags only, grants nothing at the top, lets only the
// image job push and sign and only the manifests job write the release,
// builds both architectures with SBOM and provenance, and renders the
// manifests from the digests it pushed.
func TestReleaseWorkflow_LeastPrivilegeBothArchitectures(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), ".github", "workflows", "release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		// sigs.k8s.io/yaml reads YAML 1.1, where the bare key on is a
		// boolean; GitHub reads it as the string "on".
		On struct {
			Push struct{ Tags []string } `json:"push"`
		} `json:"true"`
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Permissions map[string]string `json:"permissions"`
			Steps       []struct {
				Uses string            `json:"uses"`
				With map[string]any    `json:"with"`
				Run  string            `json:"run"`
				Env  map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) {
		t.Errorf("triggers on tags %v, want [v*]", wf.On.Push.Tags)
	}
	if len(wf.Permissions) != 0 {
		t.Errorf("top-level permissions %v, want none", wf.Permissions)
	}
	wantPerms := map[string]map[string]string{
		"tag":       {},
		"ci":        {"contents": "read"},
		"images":    {"contents": "read", "packages": "write", "id-token": "write"},
		"manifests": {"contents": "write"},
	}
	for name, job := range wf.Jobs {
		want, ok := wantPerms[name]
		if !ok {
			t.Errorf("unexpected job %s", name)
			continue
		}
		if len(job.Permissions) != len(want) {
			t.Errorf("job %s has permissions %v, want %v", name, job.Permissions, want)
		}
		for k, v := range want {
			if job.Permissions[k] != v {
				t.Errorf("job %s: %s is %q, want %q", name, k, job.Permissions[k], v)
			}
		}
	}
	builds, signs, renders := 0, 0, 0
	for _, s := range wf.Jobs["images"].Steps {
		if strings.HasPrefix(s.Uses, "docker/build-push-action@") {
			builds++
			if s.With["platforms"] != "linux/amd64,linux/arm64" || s.With["sbom"] != true || s.With["provenance"] != "mode=max" || s.With["push"] != true {
				t.Errorf("build step %v does not push both architectures with SBOM and provenance", s.With)
			}
		}
		signs += strings.Count(s.Run, "cosign sign --yes")
	}
	for _, s := range wf.Jobs["manifests"].Steps {
		if strings.Contains(s.Run, "make release-manifests") &&
			s.Env["OBSERVER_DIGEST"] == "${{ needs.images.outputs.observer-digest }}" &&
			s.Env["ACTOR_DIGEST"] == "${{ needs.images.outputs.actor-digest }}" {
			renders++
		}
	}
	if builds != 2 || signs != 2 || renders != 1 {
		t.Errorf("want 2 image builds, 2 cosign signatures and 1 render from the pushed digests; got %d, %d, %d", builds, signs, renders)
	}
}

// TestDependabot_CoversEveryModule compares dependabot's gomod directories
// with go.work: a module added to the workspace must get updates too.
func TestDependabot_CoversEveryModule(t *testing.T) {
	r := root(t)
	work, err := os.ReadFile(filepath.Join(r, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var modules []string
	for _, m := range regexp.MustCompile(`(?m)^\s*\./(\S+)\s*$`).FindAllStringSubmatch(string(work), -1) {
		modules = append(modules, "/"+m[1])
	}
	b, err := os.ReadFile(filepath.Join(r, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `json:"package-ecosystem"`
			Directory   string   `json:"directory"`
			Directories []string `json:"directories"`
		} `json:"updates"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	ecosystems := map[string][]string{}
	for _, u := range cfg.Updates {
		dirs := u.Directories
		if u.Directory != "" {
			dirs = append(dirs, u.Directory)
		}
		ecosystems[u.Ecosystem] = append(ecosystems[u.Ecosystem], dirs...)
	}
	slices.Sort(modules)
	slices.Sort(ecosystems["gomod"])
	if len(modules) == 0 || !slices.Equal(modules, ecosystems["gomod"]) {
		t.Errorf("gomod directories %v, go.work modules %v", ecosystems["gomod"], modules)
	}
	for _, e := range []string{"docker", "github-actions"} {
		if !slices.Equal(ecosystems[e], []string{"/"}) {
			t.Errorf("%s updates cover %v, want /", e, ecosystems[e])
		}
	}
}

// TestWorkflows_TestWithTheGoTheImagesBuildWith: CI, the release's CI run
// and govulncheck use the Go of the Dockerfiles' build stage, patch level
// included. A floating 1.26.x would test, and scan the standard library of,
// a newer Go than the one the images ship.
func TestWorkflows_TestWithTheGoTheImagesBuildWith(t *testing.T) {
	base := regexp.MustCompile(`(?m)^FROM\b.*\bgolang:([0-9]+\.[0-9]+\.[0-9]+)-`)
	var shipped []string
	for _, name := range []string{"Dockerfile.observer", "Dockerfile.actor"} {
		b, err := os.ReadFile(filepath.Join(root(t), name))
		if err != nil {
			t.Fatal(err)
		}
		m := base.FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("%s: no golang:X.Y.Z build stage", name)
		}
		shipped = append(shipped, m[1])
	}
	if shipped[0] != shipped[1] {
		t.Fatalf("the Dockerfiles build with Go %s and %s", shipped[0], shipped[1])
	}
	setup := regexp.MustCompile(`(?m)^\s*go-version:\s*"?([^"\s]+)"?\s*$`)
	files, err := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows found (%v)", err)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range setup.FindAllStringSubmatch(string(b), -1) {
			seen++
			if m[1] != shipped[0] {
				t.Errorf("%s: go-version %q, but the images build with Go %s", filepath.Base(f), m[1], shipped[0])
			}
		}
	}
	if seen == 0 {
		t.Error("no workflow sets up Go")
	}
}
