package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/testenv"
)

// readmeSection is the README's section under heading, up to the next
// one.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README has no section %q", heading)
	}
	section, _, _ := strings.Cut(after, "\n## ")
	return section
}

// readmeCommands are the swarm command lines of a section's shell
// blocks, continuation lines joined and comments dropped.
func readmeCommands(section string) []string {
	var cmds []string
	in, cur := false, ""
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in
			continue
		case !in:
			continue
		}
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		cur += strings.TrimSpace(l)
		if strings.HasSuffix(cur, "\\") {
			cur = strings.TrimSuffix(cur, "\\")
			continue
		}
		if strings.HasPrefix(cur, "swarm ") {
			cmds = append(cmds, cur)
		}
		cur = ""
	}
	return cmds
}

// The README's first loop with Claude Code: its loop commands work as
// printed (run here with --no-run, claude being the fake agent), root's
// IS_SANDBOX=1 is the fix the Claude Code profile prints, the first-run
// dialogs' way on is told, and the shell completion scripts are made.
func TestReadmeFirstLoopWithClaudeCode(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "First loop with Claude Code")
	for _, want := range []string{"IS_SANDBOX=1", "--dangerously-skip-permissions", "preflight_failed", "swarm ralph resume first",
		"swarm attach first", "hint:", "swarm completion bash >", "swarm completion zsh >", "swarm completion fish >"} {
		if !strings.Contains(section, want) {
			t.Errorf("the section does not say %q", want)
		}
	}
	var rootFix string
	for _, f := range agent.Claude().Fatal {
		if f.Re.MatchString("--dangerously-skip-permissions cannot be used with root/sudo privileges") {
			rootFix = f.Hint
		}
	}
	if !strings.Contains(rootFix, "--env IS_SANDBOX=1") || !strings.Contains(section, "--env IS_SANDBOX=1") {
		t.Errorf("root's fix: the profile says %q; the README must give the same flag (--env IS_SANDBOX=1)", rootFix)
	}

	e := testenv.New(t)
	e.InitRepo()
	bin := t.TempDir()
	if err := os.Symlink(e.Agent, filepath.Join(bin, "claude")); err != nil {
		t.Fatal(err)
	}
	e.Extra = append(e.Extra, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmds := readmeCommands(section)
	if inline := regexp.MustCompile("`(swarm ralph spawn [^`]*IS_SANDBOX=1[^`]*)`").FindStringSubmatch(section); inline != nil {
		cmds = append(cmds, inline[1])
	} else {
		t.Error("the section shows no ralph spawn with IS_SANDBOX=1")
	}
	ran := map[string]bool{}
	for _, c := range cmds {
		args := strings.Fields(c)[1:]
		switch {
		case args[0] == "ralph" && args[1] == "init":
		case args[0] == "ralph" && args[1] == "spawn":
			// As printed, but not started: the fake agent is no claude.
			i := slices.Index(args, "--")
			if i < 0 {
				t.Errorf("README's %q has no \"--\" before the agent's command", c)
				continue
			}
			args = append(append(append([]string{}, args[:i]...), "--no-run", "--replace"), args[i:]...)
		case args[0] == "completion":
			args = args[:2] // its output goes to the file the line names
		default:
			continue
		}
		r := e.Run(args...)
		// Notes (a branch reused by the second spawn) are fine; a
		// warning (a flag in the wrong place) is not.
		if r.Code != 0 || strings.Contains(r.Stderr, "warning") {
			t.Errorf("README's %q: %s", c, r)
		}
		if args[0] == "completion" && !strings.Contains(r.Stdout, "swarm") {
			t.Errorf("README's %q printed no script", c)
		}
		ran[strings.Join(args[:2], " ")] = true
	}
	for _, want := range []string{"ralph init", "ralph spawn", "completion bash", "completion zsh", "completion fish"} {
		if !ran[want] {
			t.Errorf("the section has no %q command", want)
		}
	}
}
