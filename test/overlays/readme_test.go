package overlays

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlocks returns the fenced code blocks of language lang in the README
// section whose heading is heading (up to the next heading of the same or a
// higher level), so the tests run exactly what the README tells users to.
func readmeBlocks(t *testing.T, heading, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(suite.env.Root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	var blocks []string
	in, fence := false, false
	var cur strings.Builder
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case fence && line == "```":
			fence = false
			blocks = append(blocks, cur.String())
			cur.Reset()
		case fence:
			cur.WriteString(line + "\n")
		case line == heading:
			in = true
		case in && strings.HasPrefix(line, "#") && strings.Index(line, " ") <= level:
			in = false
		case in && line == "```"+lang:
			fence = true
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("README section %q has no %s block", heading, lang)
	}
	return blocks
}
