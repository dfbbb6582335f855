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
