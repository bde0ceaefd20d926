package exitcode

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exitConst is the name of a constant that holds an exit code.
var exitConst = regexp.MustCompile(`^(?i)exit`)

// Every exit code is defined once, here: a constant named exit... in any
// other package takes its value from this one, never from a number of
// its own (the loop's and the commands' codes were three lists once).
func TestExitCodesAreDefinedOnce(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"..", "../../cmd"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, name := range numberedExitConsts(f) {
				t.Errorf("%s: %s is a number of its own; take it from internal/exitcode", path, name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// numberedExitConsts returns the constants named exit... whose value is
// an integer literal.
func numberedExitConsts(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) || !exitConst.MatchString(name.Name) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT {
					out = append(out, name.Name)
				}
			}
		}
	}
	return out
}
