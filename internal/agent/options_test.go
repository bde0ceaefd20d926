package agent

import "testing"

// The profile's name and an agent's own options are known from the
// command without building a profile.
func TestNameForAndOwnOptions(t *testing.T) {
	before := built.Load()
	for cmd, want := range map[string]string{"/usr/local/bin/claude": "claude", "codex": "codex", "npx": "generic", "": "generic"} {
		var command []string
		if cmd != "" {
			command = []string{cmd, "--flag"}
		}
		if got := NameFor(command); got != want {
			t.Errorf("NameFor(%q) = %q, want %q", command, got, want)
		}
	}
	for _, c := range []struct {
		cmd, option string
		own         bool
	}{
		{"claude", "--agent", true}, {"claude", "--worktree", true}, {"claude", "--max-iterations", false},
		{"opencode", "--agent", true}, {"codex", "--agent", false}, {"./run.sh", "--help", true}, {"./run.sh", "--name", false},
	} {
		if got := OwnOption([]string{c.cmd}, c.option); got != c.own {
			t.Errorf("OwnOption(%s, %s) = %v, want %v", c.cmd, c.option, got, c.own)
		}
	}
	if built.Load() != before {
		t.Error("a profile was built to name it")
	}
}
