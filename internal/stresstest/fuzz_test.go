package stresstest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/state"
)

// validName is the worker-name rule (docs/security.md, "Names are
// validated before they become paths, branches or targets") written out
// by hand, to check state.ValidateName's regular expressions against (a
// "$" that matched before a trailing newline, as in other regexp
// dialects, would let "a\n" through).
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

// FuzzValidateName: state.ValidateName accepts exactly the names of that
// rule, and every name it accepts is safe where names go: one path element
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
			t.Fatalf("ValidateName(%q) accepts=%v, the rule says %v", n, ok, validName(n))
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

// FuzzAgentScreens: for an agent profile, a screen showing a dialog or
// menu that needs a human is never ready to type a prompt into (swarm
// never types into a dialog), Judge does not call a screen Stuck sees as a
// dialog anything but a dialog or a limit, and nothing panics.
// internal/agent's FuzzJudge checks that judging any screen neither
// panics nor quotes text that is not on it; this adds the safety property
// of the profiles (what --ready-wait and the loop use before typing).
// The seeds are the real agents' screens in internal/agent/testdata, each
// judged by its own agent's profile and by the generic one; they run in
// plain go test.
func FuzzAgentScreens(f *testing.F) {
	names := agent.Names()
	index := func(name string) uint8 {
		for i, n := range names {
			if n == name {
				return uint8(i)
			}
		}
		f.Fatalf("no agent profile named %q (agent.Names: %v)", name, names)
		return 0
	}
	files, _ := filepath.Glob("../agent/testdata/*/*.txt")
	if len(files) == 0 {
		f.Fatal("no agent screens in ../agent/testdata")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		own := filepath.Base(filepath.Dir(p)) // "claude-code-2.1.197", "codex", ...
		own, _, _ = strings.Cut(own, "-code")
		f.Add(index(own), string(data))
		f.Add(index("generic"), string(data))
	}
	f.Add(index("claude"), "\x1b[2J❯ 1. Yes\n  2. No\n> ")
	f.Fuzz(func(t *testing.T, which uint8, screen string) {
		if len(screen) > 16<<10 {
			return // swarm judges a pane's visible screen, a few KB
		}
		name := names[int(which)%len(names)]
		p, _ := agent.Lookup(name)
		kind, _, stuck := p.Stuck(screen)
		ready := p.Ready(screen)
		if stuck && ready {
			t.Fatalf("%s: a %s counts as ready:\n%s", name, kind, screen)
		}
		v := p.Judge(screen, time.Unix(1_800_000_000, 0))
		if stuck && v.State != agent.Dialog && v.State != agent.Limited {
			// A limit menu is judged a limit (waited out), never typed into.
			t.Fatalf("%s: Stuck finds a %s, Judge says %q:\n%s", name, kind, v.State, screen)
		}
		if v.State == agent.Dialog && ready {
			t.Fatalf("%s: judged a dialog (%s) and ready:\n%s", name, v.Kind, screen)
		}
	})
}
