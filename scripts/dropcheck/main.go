// Command dropcheck is make lint's check of the error drops errcheck lets
// through: a call whose results are all thrown away (`_ = f()`,
// `_, _ = f()`) must say why on its line, in a comment on the line it
// starts or ends on. errcheck asks that no error be dropped unseen; this
// asks that a drop on purpose read as one (docs/development.md, "Errors").
//
// Usage: go run ./scripts/dropcheck DIR... (test files and testdata are
// not checked). It prints each drop without a reason and exits 1 if any.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	var bad []string
	for _, dir := range os.Args[1:] {
		found, err := check(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dropcheck:", err)
			os.Exit(2)
		}
		bad = append(bad, found...)
	}
	for _, b := range bad {
		fmt.Println(b)
	}
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "dropcheck: %d dropped results without a reason: write `_ = f() // why`\n", len(bad))
		os.Exit(1)
	}
}

// check walks dir and returns the drops without a reason, as
// "file:line: text".
func check(dir string) ([]string, error) {
	var bad []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found, err := checkFile(path)
		bad = append(bad, found...)
		return err
	})
	return bad, err
}

// checkFile returns one file's drops without a reason.
func checkFile(path string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	commented := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			commented[fset.Position(c.Slash).Line] = true
		}
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok || !isDrop(a) {
			return true
		}
		first, last := fset.Position(a.Pos()).Line, fset.Position(a.End()).Line
		if !commented[first] && !commented[last] {
			bad = append(bad, fmt.Sprintf("%s:%d: a dropped result without a reason on its line", path, first))
		}
		return true
	})
	return bad, nil
}

// isDrop reports an assignment of a call's (or a receive's) results to
// blank identifiers only.
func isDrop(a *ast.AssignStmt) bool {
	if a.Tok != token.ASSIGN || len(a.Rhs) != 1 {
		return false
	}
	for _, l := range a.Lhs {
		if id, ok := l.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	switch r := ast.Unparen(a.Rhs[0]).(type) {
	case *ast.CallExpr:
		return true
	case *ast.UnaryExpr:
		return r.Op == token.ARROW
	}
	return false
}
