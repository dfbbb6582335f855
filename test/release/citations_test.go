package release

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestSource_CitesNoDocumentOutsideTheRepository: a comment may point only
// at what a reader of this repository can open. The contract fact sheet the
// agent was first written from is not in it, so no file names it: Go, the
// manifests and test CRDs, the scripts and the documents.
func TestSource_CitesNoDocumentOutsideTheRepository(t *testing.T) {
	files := map[string]int{}
	self := filepath.Join(root(t), "test", "release", "citations_test.go")
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
		kind := filepath.Ext(path)
		switch kind {
		case ".go", ".yaml", ".yml", ".sh", ".md":
		default:
			return nil
		}
		if path == self {
			return nil // this file names what it looks for
		}
		files[kind]++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "CONTRACT") {
				t.Errorf("%s:%d cites CONTRACT, which is not in this repository", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files[".go"] < 100 || files[".yaml"] < 10 || files[".md"] < 4 {
		t.Fatalf("read %v files by kind; the walk missed part of the repository", files)
	}
}

// The documents a comment or a README link may cite by section, relative to
// the repository root.
const (
	contractDoc     = "docs/contract.md"
	architectureDoc = "ARCHITECTURE.md"
	contributingDoc = "CONTRIBUTING.md"
	readmeDoc       = "README.md"
)

var (
	// anchorCitation is a citation of one section: docs/contract.md#heal-storm-brake.
	anchorCitation = regexp.MustCompile(`(docs/contract\.md|ARCHITECTURE\.md)#([A-Za-z0-9_-]+)`)
	// bareLabel is a flaw of the original agent named without the document
	// that defines it; the citation form is docs/contract.md#g-9.
	bareLabel = regexp.MustCompile(`\b[GP]-[0-9]+\b`)
	// sectionSign is a numbered section of some document. Only an RFC's may
	// be cited that way: the project's own are cited by anchor.
	sectionSign = regexp.MustCompile(`(RFC ?[0-9]+,? )?§ ?[0-9]`)
	// markdownLink is the target of an inline link: [text](target).
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading      = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
	htmlAnchor   = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// TestSource_CitesOnlySectionsAndLabelsTheContractHas reads every comment of
// every Go file in the four modules: a section they cite in
// docs/contract.md or ARCHITECTURE.md must exist there, a flaw of the
// original agent must be cited by its anchor in docs/contract.md (its label
// in lower case) and defined there, and no comment may cite a numbered
// section (§) other than an RFC's. It first proves, on planted comments,
// that it finds each kind of fault.
func TestSource_CitesOnlySectionsAndLabelsTheContractHas(t *testing.T) {
	anchors := map[string]map[string]bool{
		contractDoc:     docAnchors(t, filepath.Join(root(t), contractDoc)),
		architectureDoc: docAnchors(t, filepath.Join(root(t), architectureDoc)),
	}
	for _, tc := range []struct {
		comment string
		faults  int
	}{
		{"// the brake (docs/contract.md#heal-storm-brake), as closed by docs/contract.md#g-12", 0},
		{"// a Retry-After value (RFC 9110 §10.2.3)", 0},
		{"// see docs/contract.md#no-such-section", 1},
		{"// see ARCHITECTURE.md#no-such-section", 1},
		{"// closing docs/contract.md#g-99", 1},
		{"// closing G-4", 1},
		{"// the §4.4 table", 1},
	} {
		if got := commentFaults(tc.comment, anchors); len(got) != tc.faults {
			t.Errorf("planted %q: found %d faults %q, want %d", tc.comment, len(got), got, tc.faults)
		}
	}

	comments := 0
	for _, module := range []string{"shared", "observer", "actor", "test"} {
		err := filepath.WalkDir(filepath.Join(root(t), module), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			for _, group := range f.Comments {
				for _, c := range group.List {
					comments++
					for _, fault := range commentFaults(c.Text, anchors) {
						t.Errorf("%s: %s", fset.Position(c.Pos()), fault)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if comments < 1000 {
		t.Fatalf("read %d comments; the walk missed the modules", comments)
	}
}

// commentFaults lists what is wrong with the citations in one comment.
func commentFaults(comment string, anchors map[string]map[string]bool) []string {
	var faults []string
	for _, m := range anchorCitation.FindAllStringSubmatch(comment, -1) {
		if !anchors[m[1]][m[2]] {
			faults = append(faults, fmt.Sprintf("cites %s, which has no section #%s", m[1], m[2]))
		}
	}
	for _, label := range bareLabel.FindAllString(comment, -1) {
		faults = append(faults, fmt.Sprintf("names %s bare; cite it as %s#%s", label, contractDoc, strings.ToLower(label)))
	}
	for _, m := range sectionSign.FindAllStringSubmatch(comment, -1) {
		if m[1] == "" {
			faults = append(faults, fmt.Sprintf("cites a numbered section (%q); cite this project's documents by anchor", m[0]))
		}
	}
	return faults
}

// TestDocs_LinksIntoTheDocsNameSectionsThatExist reads every relative
// markdown link of README.md, ARCHITECTURE.md, CONTRIBUTING.md and
// docs/contract.md: the file it leads to must exist and, when it is one of
// these and the link
// names a section, have that section. It first proves, on a planted
// document, that it finds a missing section and a missing file.
func TestDocs_LinksIntoTheDocsNameSectionsThatExist(t *testing.T) {
	docs := []string{readmeDoc, architectureDoc, contributingDoc, contractDoc}
	anchors := map[string]map[string]bool{}
	for _, doc := range docs {
		anchors[doc] = docAnchors(t, filepath.Join(root(t), doc))
	}
	planted := "[ok](docs/contract.md#heal-storm-brake) [ok](ARCHITECTURE.md) [ok](#install)\n" +
		"```\n[code, not a link](docs/contract.md#in-a-code-block)\n```\n" +
		"[missing](docs/contract.md#no-such-section) [missing](ARCHITECTURE.md#nowhere) [gone](docs/CONTRACTS.md)\n"
	if got := linkFaults(root(t), readmeDoc, planted, anchors); len(got) != 3 {
		t.Errorf("planted links: found %d faults %q, want 3", len(got), got)
	}

	links := 0
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root(t), doc))
		if err != nil {
			t.Fatal(err)
		}
		links += strings.Count(string(b), "](")
		for _, fault := range linkFaults(root(t), doc, string(b), anchors) {
			t.Errorf("%s: %s", doc, fault)
		}
	}
	if links < 50 {
		t.Fatalf("read %d links; the documents are not where the test looks", links)
	}
}

// linkFaults lists the relative markdown links of text, the document doc
// under dir, that lead to a file that is not there or to a section one of
// the documents in anchors does not have. Web links are not its business.
func linkFaults(dir, doc, text string, anchors map[string]map[string]bool) []string {
	var faults []string
	inCode := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
			target, section, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, ":") {
				continue // https://…, mailto:…
			}
			path := doc
			if target != "" {
				path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), target)))
			}
			have, known := anchors[path]
			switch {
			case !known:
				if _, err := os.Stat(filepath.Join(dir, path)); err != nil {
					faults = append(faults, fmt.Sprintf("line %d links to %s, which does not exist", i+1, m[1]))
				}
			case section != "" && !have[section]:
				faults = append(faults, fmt.Sprintf("line %d links to %s, which has no section #%s", i+1, path, section))
			}
		}
	}
	return faults
}

// docAnchors returns the section anchors of a markdown document as GitHub
// makes them: one per heading outside code blocks, and one per explicit
// <a id="…"> or <a name="…">.
func docAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				anchors[s] = true
			}
			seen[s]++
		}
	}
	if len(anchors) == 0 {
		t.Fatalf("%s has no sections", path)
	}
	return anchors
}

// slug is GitHub's heading anchor: lower case, every character but letters,
// digits, '-' and '_' dropped, and each space a '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
