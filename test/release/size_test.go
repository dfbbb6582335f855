package release

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestProductCode_KeepsCONTRIBUTINGsSizeLimits: no product function over 80
// lines and no product file over 300, as CONTRIBUTING.md promises; tests and
// generated files aside. The control is a check that the walk read files.
func TestProductCode_KeepsCONTRIBUTINGsSizeLimits(t *testing.T) {
	fset := token.NewFileSet()
	read := 0
	for _, module := range []string{"actor", "observer", "shared"} {
		err := filepath.WalkDir(filepath.Join(root(t), module), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") ||
				strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			read++
			if n := fset.File(f.Pos()).LineCount(); n > 300 {
				t.Errorf("%s: %d lines, over 300", path, n)
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok {
					if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
						t.Errorf("%s: func %s is %d lines, over 80", path, fn.Name.Name, n)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if read < 100 {
		t.Fatalf("read %d product files; the walk missed the modules", read)
	}
}
