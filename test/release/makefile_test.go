package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakefile_EveryTargetIsPhonyAndDocumented reads the Makefile: the
// .PHONY targets, the rules and the `## target: text` comments that
// `make help` prints are the same set, so a new target shows in the help
// and none is mistaken for a file.
func TestMakefile_EveryTargetIsPhonyAndDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var phony []string
	for _, m := range regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindAllStringSubmatch(text, -1) {
		phony = append(phony, strings.Fields(m[1])...)
	}
	var rules []string
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+):([^=]|$)`).FindAllStringSubmatch(text, -1) {
		if m[1] != ".PHONY" {
			rules = append(rules, m[1])
		}
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^## ([A-Za-z0-9_.-]+): \S`).FindAllStringSubmatch(text, -1) {
		documented = append(documented, m[1])
	}
	for _, set := range [][]string{phony, rules, documented} {
		slices.Sort(set)
	}
	if !slices.Equal(phony, rules) {
		t.Errorf(".PHONY %v\nrules  %v", phony, rules)
	}
	if !slices.Equal(documented, rules) {
		t.Errorf("## comments %v\nrules       %v", documented, rules)
	}
	for _, want := range []string{"help", "test-unit", "image", "release-manifests", "vulncheck"} {
		if !slices.Contains(rules, want) {
			t.Errorf("no %s target", want)
		}
	}
}

// TestMakefile_BuildsTheBinariesAsTheImagesDo: `make build` and the
// Dockerfiles build each binary the same way, from its own module with
// GOWORK=off, so the dependency versions a local build links are the ones
// the image ships, not the workspace's (where the test module's
// requirements can raise them).
func TestMakefile_BuildsTheBinariesAsTheImagesDo(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	ldflags := regexp.MustCompile(`(?m)^LDFLAGS := (.*)$`).FindStringSubmatch(text)
	recipe := regexp.MustCompile(`(?ms)^build:\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(text)
	if ldflags == nil || recipe == nil {
		t.Fatal("no LDFLAGS or no build recipe in the Makefile")
	}
	lines := strings.ReplaceAll(recipe[1], "$(LDFLAGS)", ldflags[1])
	for _, bin := range []string{"observer", "actor"} {
		df, err := os.ReadFile(filepath.Join(root(t), "Dockerfile."+bin))
		if err != nil {
			t.Fatal(err)
		}
		image, ok := goBuild(parseDockerfile(string(df))[0])
		if !ok {
			t.Fatalf("Dockerfile.%s has no go build", bin)
		}
		var local string
		for line := range strings.SplitSeq(lines, "\n") {
			if strings.Contains(line, "go build") && strings.Contains(line, "bin/"+bin) {
				local = line
			}
		}
		if local == "" {
			t.Fatalf("make build does not build bin/%s", bin)
		}
		for _, want := range []string{"cd " + bin + " && ", "GOWORK=off", "CGO_ENABLED=0", "-trimpath",
			"-s -w -X kubehz.dev/agent/shared/buildinfo.Version="} {
			if !strings.Contains(image, want) {
				t.Fatalf("Dockerfile.%s's go build lacks %q; this test's list is out of date", bin, want)
			}
			if !strings.Contains(local, want) {
				t.Errorf("make build builds %s without %q, as its image does: %s", bin, want, strings.TrimSpace(local))
			}
		}
	}
}
