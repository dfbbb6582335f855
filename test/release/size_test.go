package release

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProductCode_KeepsCONTRIBUTINGsSizeLimits: no product function over 80
// lines and no product file over 300, as CONTRIBUTING.md promises; tests and
// generated files aside. The controls: the walk read the modules' files,
// and TestOversize_FlagsOnlyWhatPassesTheLimits shows the check bites.
func TestProductCode_KeepsCONTRIBUTINGsSizeLimits(t *testing.T) {
	fset := token.NewFileSet()
	read := 0
	for _, module := range []string{"actor", "observer", "shared"} {
		err := filepath.WalkDir(filepath.Join(root(t), module), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") ||
				strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
				return err
			}
			problems, err := oversize(fset, path, nil)
			if err != nil {
				return err
			}
			read++
			for _, p := range problems {
				t.Error(p)
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

// oversize says what in one Go file is past the limits: the file over 300
// lines, each function over 80. src is as parser.ParseFile takes it.
func oversize(fset *token.FileSet, path string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var problems []string
	if n := fset.File(f.Pos()).LineCount(); n > 300 {
		problems = append(problems, fmt.Sprintf("%s: %d lines, over 300", path, n))
	}
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok {
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
				problems = append(problems, fmt.Sprintf("%s: func %s is %d lines, over 80", path, fn.Name.Name, n))
			}
		}
	}
	return problems, nil
}

func TestOversize_FlagsOnlyWhatPassesTheLimits(t *testing.T) {
	// source is a file of fileLines lines holding one function of funcLines.
	source := func(funcLines, fileLines int) string {
		body := "package p\n\nfunc f() {\n" + strings.Repeat("\t_ = 0\n", funcLines-2) + "}\n"
		return body + strings.Repeat("// padding\n", fileLines-2-funcLines)
	}
	for _, tc := range []struct {
		name                 string
		funcLines, fileLines int
		want                 []string
	}{
		{"both at their limits", 80, 300, nil},
		{"a function one line over", 81, 300, []string{"p.go: func f is 81 lines, over 80"}},
		{"a file one line over", 80, 301, []string{"p.go: 301 lines, over 300"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := source(tc.funcLines, tc.fileLines)
			if n := strings.Count(src, "\n"); n != tc.fileLines {
				t.Fatalf("the fixture has %d lines, want %d", n, tc.fileLines)
			}
			got, err := oversize(token.NewFileSet(), "p.go", src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
