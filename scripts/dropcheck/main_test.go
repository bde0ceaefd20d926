package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each drop of a call's or a receive's results needs a comment on the
// line it starts or ends on; other blank assignments are not drops.
func TestCheckFile(t *testing.T) {
	t.Parallel()
	src := `package p

func f() error        { return nil }
func g() (int, error) { return 0, nil }

func h(c chan error, x int) {
	_ = f()
	_, _ = g()
	_ = <-c
	_ = f() // the reason
	_, _ = g() // the reason
	_ = (f())
	_ = x
	_ = func() error {
		return f()
	}() // the reason, on the line it ends on
	defer func() { _ = f() }()
	var y int
	y, _ = g()
	_ = y
}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bad, err := checkFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, b := range bad {
		_, rest, _ := strings.Cut(b, "p.go:")
		line, _, _ := strings.Cut(rest, ":")
		lines = append(lines, line)
	}
	if got, want := strings.Join(lines, " "), "7 8 9 12 17"; got != want {
		t.Fatalf("drops without a reason at lines %q, want %q:\n%s", got, want, strings.Join(bad, "\n"))
	}
}
