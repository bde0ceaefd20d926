package ralph

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every line of iterations.log is written with a named event (Event), the
// one list of swarm.py's names: no call writes an event spelled out in
// a string of its own.
func TestEventsAreNamedOnce(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if pos, ok := bareEvent(n); ok {
				t.Errorf("%s: an event written as a string literal; use an Event constant", fset.Position(pos))
			}
			return true
		})
	}
}

// bareEvent reports a call of log, Log or logEvent whose event argument
// is a string literal.
func bareEvent(n ast.Node) (token.Pos, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return 0, false
	}
	name, arg := "", 0
	switch fun := call.Fun.(type) {
	case *ast.SelectorExpr:
		name = fun.Sel.Name
	case *ast.Ident:
		name, arg = fun.Name, 1
	}
	if (name != "log" && name != "Log" && name != "logEvent") || len(call.Args) <= arg {
		return 0, false
	}
	lit, ok := call.Args[arg].(*ast.BasicLit)
	return call.Pos(), ok && lit.Kind == token.STRING
}
