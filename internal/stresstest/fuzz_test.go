package stresstest

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/state"
)

// validName is the worker-name rule of SPEC §1 written out by hand, to
// check state.ValidateName's regular expressions against (a "$" that
// matched before a trailing newline, as in other regexp dialects, would
// let "a\n" through).
func validName(n string) bool {
	if len(n) == 0 || len(n) > 64 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(n[0]) {
		return false
	}
	digitsOnly := true
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
		if c < '0' || c > '9' {
			digitsOnly = false
		}
	}
	return !digitsOnly
}

// FuzzValidateName: state.ValidateName accepts exactly the names of SPEC
// §1, and every name it accepts is safe where names go: one path element
// that stays inside the directory it is joined to, and a tmux window name
// that no target syntax can read as anything else (no ':' or whitespace,
// no leading '-', '=', '@', '%', '$', '{', '.', and not a window index).
// Its seed corpus runs in plain go test.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{
		"a", "w-1.b_c", "-x", ".", "..", "a..b", ".hidden", "a/b", "../x", "a\n", "a\x00", "1234", "12a",
		"x:y", "x y", "#{pane_id}", "=x", "@1", "%1", "$x", "{last}", "é", "C#Sharp;x", "x;",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		ok := state.ValidateName(n) == nil
		if ok != validName(n) {
			t.Fatalf("ValidateName(%q) accepts=%v, SPEC says %v", n, ok, validName(n))
		}
		if !ok {
			if err := state.ValidateName(n); !strings.HasPrefix(err.Error(), "invalid worker name '") {
				t.Fatalf("error for %q: %v", n, err)
			}
			return
		}
		root := "/state/ralph"
		p := filepath.Join(root, n)
		if filepath.Dir(p) != root || filepath.Base(p) != n {
			t.Fatalf("name %q is not one path element under %s: %s", n, root, p)
		}
		if strings.ContainsAny(n, ": \t\n#;'\"\\/") || strings.ContainsAny(n[:1], "-=@%${.") {
			t.Fatalf("name %q holds tmux or shell syntax", n)
		}
		if _, err := strconv.Atoi(n); err == nil {
			t.Fatalf("name %q is a window index", n)
		}
	})
}
