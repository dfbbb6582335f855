package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/releasemanifests"
)

// published is one image tag a workflow pushes: the repository and the
// tag's shape.
type published struct {
	workflow, repo string
	tag            *regexp.Regexp
}

// publishedImages reads every workflow and returns each tag that a
// docker/build-push-action step with push: true pushes, with the
// workflow's env substituted and each GitHub expression in the tag turned
// into the shape its value has: a release tag where the workflow runs on
// v* tags, a commit SHA for head_sha.
func publishedImages(t *testing.T) []published {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows found (%v)", err)
	}
	expr := regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	var out []published
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			// "on" is the YAML 1.1 boolean true to sigs.k8s.io/yaml.
			On struct {
				Push struct{ Tags []string } `json:"push"`
			} `json:"true"`
			Env  map[string]string `json:"env"`
			Jobs map[string]struct {
				Steps []struct {
					Uses string         `json:"uses"`
					With map[string]any `json:"with"`
				} `json:"steps"`
			} `json:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		onVersionTags := slices.Equal(wf.On.Push.Tags, []string{"v*"})
		for _, job := range wf.Jobs {
			for _, s := range job.Steps {
				if !strings.HasPrefix(s.Uses, "docker/build-push-action@") || s.With["push"] != true {
					continue
				}
				tags, _ := s.With["tags"].(string)
				for line := range strings.Lines(tags) {
					line = strings.TrimSpace(line)
					if line == "" {
						continue
					}
					// Literal text quoted, each expression replaced by the
					// shape of its value.
					var unknown []string
					var pattern strings.Builder
					last := 0
					for _, m := range expr.FindAllStringSubmatchIndex(line, -1) {
						pattern.WriteString(regexp.QuoteMeta(line[last:m[0]]))
						last = m[1]
						name := line[m[2]:m[3]]
						switch v, isEnv := wf.Env[strings.TrimPrefix(name, "env.")]; {
						case strings.HasPrefix(name, "env.") && isEnv:
							pattern.WriteString(regexp.QuoteMeta(v))
						case name == "github.ref_name" && onVersionTags:
							pattern.WriteString(`v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?`)
						case name == "github.event.workflow_run.head_sha" || name == "github.sha":
							pattern.WriteString(`[0-9a-f]{40}`)
						default:
							unknown = append(unknown, name)
						}
					}
					pattern.WriteString(regexp.QuoteMeta(line[last:]))
					if len(unknown) > 0 {
						t.Fatalf("%s: tag %q uses %v, which this test cannot resolve", filepath.Base(f), line, unknown)
					}
					repo, tag, ok := strings.Cut(pattern.String(), ":")
					if !ok {
						t.Fatalf("%s: tag %q has no tag part", filepath.Base(f), line)
					}
					out = append(out, published{workflow: filepath.Base(f), repo: strings.ReplaceAll(repo, `\`, ""), tag: regexp.MustCompile("^" + tag + "$")})
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no workflow pushes an image")
	}
	return out
}

// images returns every container image named in objs.
func images(objs []map[string]any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "containers" || k == "initContainers" {
					list, _ := child.([]any)
					for _, c := range list {
						if c, ok := c.(map[string]any); ok {
							image, _ := c["image"].(string)
							out = append(out, image)
						}
					}
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	for _, o := range objs {
		walk(o)
	}
	return out
}

// TestImages_EveryInstallPathNamesAnImageTheWorkflowsPublish renders each
// documented install path: deploy/'s tiers as `kubectl apply -k` does must
// name a repository and tag a workflow pushes, and the release files must
// name, by digest, a repository the release workflow (on v* tags) pushes.
func TestImages_EveryInstallPathNamesAnImageTheWorkflowsPublish(t *testing.T) {
	pub := publishedImages(t)
	for _, tier := range []string{"observer", "actor", "register"} {
		objs, err := kube.Render(filepath.Join(root(t), "deploy", tier))
		if err != nil {
			t.Fatal(err)
		}
		var maps []map[string]any
		for _, o := range objs {
			maps = append(maps, o.Object)
		}
		found := images(maps)
		if len(found) == 0 {
			t.Fatalf("deploy/%s names no image", tier)
		}
		for _, image := range found {
			repo, tag, ok := strings.Cut(image, "@")
			if !ok {
				i := strings.LastIndex(image, ":")
				if i < strings.LastIndex(image, "/") {
					t.Errorf("deploy/%s: image %q has no tag", tier, image)
					continue
				}
				repo, tag = image[:i], image[i+1:]
			}
			if !slices.ContainsFunc(pub, func(p published) bool { return p.repo == repo && p.tag.MatchString(tag) }) {
				t.Errorf("deploy/%s: image %q is not one any workflow publishes", tier, image)
			}
		}

		raw, err := releasemanifests.Render(releaseOptions(root(t), "v1.2.3"), tier)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range decodeAll(t, raw) {
			for _, image := range images([]map[string]any{o.Object}) {
				repo, _, _ := strings.Cut(image, "@")
				if !slices.ContainsFunc(pub, func(p published) bool {
					return p.workflow == "release.yaml" && p.repo == repo && p.tag.MatchString("v1.2.3")
				}) {
					t.Errorf("install-%s.yaml: image %q is not in a repository the release workflow pushes to", tier, image)
				}
			}
		}
	}
}
