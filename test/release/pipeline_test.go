package release

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/releasemanifests"
)

// workflow is what these tests read of a GitHub Actions workflow.
type workflow struct {
	// sigs.k8s.io/yaml reads the bare key on as the boolean true.
	On   map[string]any `json:"true"`
	Jobs map[string]struct {
		Uses        string            `json:"uses"`
		Needs       any               `json:"needs"`
		Permissions map[string]string `json:"permissions"`
		Steps       []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses"`
			With map[string]any    `json:"with"`
			Run  string            `json:"run"`
			Env  map[string]string `json:"env"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return wf
}

// needs returns a job's needs as a list, whichever form the YAML uses.
func needs(v any) []string {
	switch n := v.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, s := range n {
			out = append(out, s.(string))
		}
		return out
	}
	return nil
}

// goSums lists every go.sum in the repository, relative to its root.
func goSums(t *testing.T) []string {
	t.Helper()
	r := root(t)
	var out []string
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.Name() == "go.sum" {
			rel, _ := filepath.Rel(r, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil || len(out) < 4 {
		t.Fatalf("go.sum files %v (%v)", out, err)
	}
	return out
}

// TestWorkflows_CacheEveryModuleAndTheControlPlanes: every setup-go keys
// its module cache on every go.sum (the default, the root go.sum, does not
// exist here, so nothing would be cached), and CI keeps the control planes
// and machine-controller hack/ builds (~20 minutes cold) keyed on every
// build script, the tools' go.sum and the controller's patch, restored
// before .ci/run.
func TestWorkflows_CacheEveryModuleAndTheControlPlanes(t *testing.T) {
	sums := goSums(t)
	for _, name := range []string{"ci.yaml", "release.yaml"} {
		wf := readWorkflow(t, name)
		for job, j := range wf.Jobs {
			for _, s := range j.Steps {
				if !strings.HasPrefix(s.Uses, "actions/setup-go@") {
					continue
				}
				listed, _ := s.With["cache-dependency-path"].(string)
				got := strings.Fields(listed)
				for _, sum := range sums {
					if !slices.Contains(got, sum) {
						t.Errorf("%s job %s: setup-go cache-dependency-path lacks %s (has %q)", name, job, sum, got)
					}
				}
			}
		}
	}

	script, err := os.ReadFile(filepath.Join(root(t), "hack", "cache.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "$HOME/.cache}/kubehz-agent/controlplane") {
		t.Fatal("hack/cache.sh no longer builds into ~/.cache/kubehz-agent/controlplane; update the cache path and this test")
	}
	var tools []string
	for _, s := range sums {
		if strings.HasPrefix(s, "test/tools/") {
			tools = append(tools, s)
		}
	}
	hashed := regexp.MustCompile(`hashFiles\(([^)]*)\)`)
	cached, ran := false, false
	for _, s := range readWorkflow(t, "ci.yaml").Jobs["test"].Steps {
		if strings.Contains(s.Run, ".ci/run") {
			ran = true
		}
		if !strings.HasPrefix(s.Uses, "actions/cache@") || s.With["path"] != "~/.cache/kubehz-agent/controlplane" {
			continue
		}
		if ran {
			t.Error("the control-plane cache is restored after .ci/run")
		}
		cached = true
		key, _ := s.With["key"].(string)
		var patterns []string
		for _, m := range hashed.FindAllStringSubmatch(key, -1) {
			for p := range strings.SplitSeq(m[1], ",") {
				patterns = append(patterns, strings.Trim(strings.TrimSpace(p), `'"`))
			}
		}
		built := []string{"hack/cache.sh", "hack/controlplane.sh", "hack/machinecontroller.sh", "test/tools/machine-controller/simcloud.patch"}
		for _, f := range append(built, tools...) {
			if !slices.ContainsFunc(patterns, func(p string) bool { ok, _ := filepath.Match(p, f); return ok }) {
				t.Errorf("the control-plane cache key %q does not hash %s", key, f)
			}
		}
	}
	if !cached {
		t.Error("ci.yaml's test job caches no ~/.cache/kubehz-agent/controlplane")
	}
}

// TestReleaseWorkflow_ValidatesTheTagAndPassesCIBeforePushing: nothing is
// pushed or signed for a tag that is not a release version, or for a commit
// the CI workflow has not passed. The tag job runs first with no
// permissions, the CI workflow itself runs as a called workflow, and the
// images job needs both. The tag job's script, run by bash, passes exactly
// the tags the release renderer accepts (vX.Y.Z with an optional dotted
// pre-release, not git describe's name, at most 63 characters).
func TestReleaseWorkflow_ValidatesTheTagAndPassesCIBeforePushing(t *testing.T) {
	wf := readWorkflow(t, "release.yaml")
	ci := readWorkflow(t, "ci.yaml")
	if _, ok := ci.On["workflow_call"]; !ok {
		t.Error("ci.yaml cannot be called from the release workflow (no workflow_call trigger)")
	}
	var tagJob, ciJob, check string
	for name, j := range wf.Jobs {
		if j.Uses == "./.github/workflows/ci.yaml" {
			ciJob = name
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Name, "Refuse a tag") && s.Env["TAG"] == "${{ github.ref_name }}" {
				tagJob, check = name, s.Run
			}
		}
	}
	if tagJob == "" || ciJob == "" {
		t.Fatalf("want a job that checks the tag (found %q) and one that calls ci.yaml (found %q)", tagJob, ciJob)
	}
	if len(needs(wf.Jobs[tagJob].Needs)) != 0 || len(wf.Jobs[tagJob].Permissions) != 0 || wf.Jobs[tagJob].Permissions == nil {
		t.Errorf("the tag job %s must run first and with permissions: {}", tagJob)
	}
	if !slices.Contains(needs(wf.Jobs[ciJob].Needs), tagJob) {
		t.Errorf("CI runs before the tag is checked (job %s needs %v)", ciJob, wf.Jobs[ciJob].Needs)
	}
	for _, want := range []string{tagJob, ciJob} {
		if !slices.Contains(needs(wf.Jobs["images"].Needs), want) {
			t.Errorf("the images job pushes without waiting for %s (needs %v)", want, wf.Jobs["images"].Needs)
		}
	}
	// The step's own script, run as the runner would, against the
	// renderer's verdict: a tag it passes must render, or the images would
	// be pushed and signed for a release whose manifests then fail.
	digest := "sha256:" + strings.Repeat("a", 64)
	for tag, ok := range map[string]bool{
		"v1.2.3": true, "v0.1.0": true, "v10.20.30": true, "v1.2.3-rc.1": true, "v1.2.3-alpha-2.x": true,
		"v1.2.3-" + strings.Repeat("r", 56): true,
		"v1.2":                              false, "1.2.3": false, "v01.2.3": false, "v1.2.3-": false, "v1.2.3-rc..1": false,
		//nolint:gocritic // a trailing space is one of the refused tags
		"v1.2.3+build": false, "v1.2.3 ": false, "vX": false, "v1.2.3/../x": false,
		"v1.2.3-4-gabc1234": false, "v1.2.3-4-gabc1234-dirty": false, "v1.2.3-dirty": false,
		"v1.2.3-" + strings.Repeat("r", 57): false,
	} {
		cmd := exec.Command("bash", "-e", "-c", check)
		cmd.Env = append(os.Environ(), "TAG="+tag)
		out, err := cmd.CombinedOutput()
		if passed := err == nil; passed != ok {
			t.Errorf("tag check: %q passed %v, want %v (%s)", tag, passed, ok, out)
		}
		opts := releasemanifests.Options{Version: tag, Digests: map[string]string{"observer": digest, "actor": digest}}
		if rendered := opts.Validate() == nil; rendered != ok {
			t.Errorf("release renderer: %q accepted %v, want %v, as the tag check does", tag, rendered, ok)
		}
	}
}

// identity is the only certificate identity a signature of ours may carry:
// this repository's release workflow, at a tag.
const identityPrefix = "https://github.com/kubehz/kubehz-agent/.github/workflows/release.yaml@refs/tags/"

// TestCosign_VerifiesThisRepositorysReleaseWorkflowOnly: the README's
// verify command and the release workflow's own check after signing name
// the one certificate identity, this repository's release.yaml at the tag,
// exactly, never a pattern that any repository of the organisation, or any
// workflow, would also satisfy. The README's download URL names the same
// repository.
func TestCosign_VerifiesThisRepositorysReleaseWorkflowOnly(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "https://github.com/kubehz/kubehz-agent/releases/download/") {
		t.Fatal("the README downloads releases from another repository than the identity names")
	}
	flag := regexp.MustCompile(`--certificate-identity(?:-regexp)?[ =]("[^"]*"|'[^']*'|\S+)`)
	check := func(where, text string) {
		t.Helper()
		found := flag.FindAllStringSubmatch(text, -1)
		if len(found) == 0 {
			t.Errorf("%s: no cosign --certificate-identity", where)
		}
		for _, m := range found {
			v := strings.Trim(m[1], `'"`)
			if strings.HasPrefix(m[0], "--certificate-identity-regexp") || !strings.HasPrefix(v, identityPrefix) ||
				strings.ContainsAny(strings.TrimPrefix(v, identityPrefix), "*^[]|/") {
				t.Errorf("%s: %s is not exactly %s<tag>", where, m[0], identityPrefix)
			}
		}
	}
	check("README", string(readme))
	var run strings.Builder
	for _, s := range readWorkflow(t, "release.yaml").Jobs["images"].Steps {
		if strings.Contains(s.Run, "cosign verify") {
			run.WriteString(s.Run)
		}
	}
	check("release.yaml", run.String())
}
