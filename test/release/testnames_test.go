package release

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	testDecl = regexp.MustCompile(`^func ((?:Test|Benchmark|Fuzz)\w+)\(`)
	// A cited name followed by "…" stands for every test it begins.
	testCite = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z]\w*)(…)?`)
)

// TestDocs_NameOnlyTestsThatExist: the documents point readers at tests as
// the proof of what they say, and comments point at the test that pins
// a rule elsewhere. A renamed or deleted test leaves such a pointer
// leading nowhere, so every Test, Benchmark or Fuzz name that a markdown
// document or a Go comment cites must be declared somewhere in the
// repository; a name followed by "…" must begin one. It first proves, on
// planted lines, that it finds a missing name and a missing prefix.
func TestDocs_NameOnlyTestsThatExist(t *testing.T) {
	declared := map[string]bool{}
	type cite struct{ where, text string }
	var cites []cite
	err := filepath.WalkDir(root(t), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		goFile, markdown := strings.HasSuffix(path, ".go"), strings.HasSuffix(path, ".md")
		if !goFile && !markdown {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root(t), path)
		s := bufio.NewScanner(f)
		s.Buffer(nil, 1<<20)
		for n := 1; s.Scan(); n++ {
			line := s.Text()
			if m := testDecl.FindStringSubmatch(line); m != nil {
				declared[m[1]] = true
			}
			if markdown || strings.HasPrefix(strings.TrimSpace(line), "//") {
				cites = append(cites, cite{where: rel + ":" + strconv.Itoa(n), text: line})
			}
		}
		return s.Err()
	})
	if err != nil {
		t.Fatal(err)
	}

	planted := map[string]bool{"TestA_Exists": true, "TestB_Begins": true}
	for line, want := range map[string]int{
		"see `TestA_Exists` and TestB_… and TestB_Begins…": 0,
		"see `TestA_Gone`":                  1,
		"see TestC_… for the rest":          1,
		"TestMain and BenchmarkNone, twice": 2,
	} {
		if got := missingTests(line, planted); len(got) != want {
			t.Errorf("planted %q: missing %q, want %d", line, got, want)
		}
	}

	found := 0
	for _, c := range cites {
		found += len(testCite.FindAllString(c.text, -1))
		for _, name := range missingTests(c.text, declared) {
			t.Errorf("%s names %s, which no test declares", c.where, name)
		}
	}
	if found < 150 || len(declared) < 500 {
		t.Fatalf("read %d citations of %d tests; the files are not where the test looks", found, len(declared))
	}
}

// missingTests returns the names line cites that declared lacks.
func missingTests(line string, declared map[string]bool) []string {
	var missing []string
	for _, m := range testCite.FindAllStringSubmatch(line, -1) {
		name, prefix := m[1], m[2] != ""
		ok := declared[name]
		for d := range declared {
			ok = ok || prefix && strings.HasPrefix(d, name)
		}
		if !ok {
			missing = append(missing, m[0])
		}
	}
	return missing
}
