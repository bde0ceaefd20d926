package clock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Time is taken from one place: outside this package no product or tool
// code under internal/ or cmd/ calls time.Sleep (Clock.Sleep and Wait do
// the waiting), and no loop compares time.Now() with a deadline of its
// own (Wait is the one deadline loop).
func TestNoSleepOrDeadlineLoopOutsideTheClock(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"..", "../../cmd"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "clock" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			for _, bad := range timeMisuses(t, path) {
				t.Errorf("%s: %s", bad.pos, bad.what)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

type misuse struct {
	pos  token.Position
	what string
}

// timeMisuses finds, in one Go file, the calls of time.Sleep and the
// loops that look at time.Now() against a deadline.
func timeMisuses(t *testing.T, path string) []misuse {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []misuse
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if isTimeFunc(n.Fun, "Sleep") {
				out = append(out, misuse{fset.Position(n.Pos()), "time.Sleep (use clock.Clock's Sleep or clock.Wait)"})
			}
		case *ast.ForStmt:
			ast.Inspect(n, func(m ast.Node) bool {
				if _, ok := m.(*ast.FuncLit); ok {
					return false // a function made in the loop runs elsewhere
				}
				if c, ok := m.(*ast.CallExpr); ok && comparesNow(c) {
					out = append(out, misuse{fset.Position(c.Pos()), "a deadline loop on time.Now() (use clock.Wait)"})
				}
				return true
			})
		}
		return true
	})
	return out
}

// comparesNow reports a call time.Now().Before(x) or time.Now().After(x).
func comparesNow(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "Before" && sel.Sel.Name != "After") {
		return false
	}
	inner, ok := sel.X.(*ast.CallExpr)
	return ok && isTimeFunc(inner.Fun, "Now")
}

// isTimeFunc reports whether fun is time.<name>.
func isTimeFunc(fun ast.Expr, name string) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "time"
}
