package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSource_CitesNoDocumentOutsideTheRepository: a comment may point only
// at what a reader of this repository can open. The contract fact sheet the
// agent was first written from is not in it, so no Go file names it.
func TestSource_CitesNoDocumentOutsideTheRepository(t *testing.T) {
	files := 0
	for _, module := range []string{"shared", "observer", "actor", "test"} {
		err := filepath.WalkDir(filepath.Join(root(t), module), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			if path == filepath.Join(root(t), "test", "release", "citations_test.go") {
				return nil // this file names what it looks for
			}
			files++
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
	}
	if files < 100 {
		t.Fatalf("read %d Go files; the walk missed the modules", files)
	}
}
