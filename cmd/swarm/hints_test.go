package main

import (
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// Errors that have a fix print it on a second line, "hint: ...".
func TestErrorsSayHowToFixThem(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.MustRun("spawn", "--name", "w1", "--tmux", "--", "sleep", "300")
	e.MustRun("spawn", "--name", "p", "--", "sleep", "300")
	e.WriteFile("PROMPT.md", "work")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"spawn", "--name", "w1", "--tmux", "--", "sleep", "1"}, 1,
			"swarm: error: worker 'w1' already exists\nhint: remove the old one first: swarm kill w1; swarm clean w1 (or pick another --name)\n"},
		{[]string{"ralph", "spawn", "--name", "r", "--prompt-file", "PROMPT.md", "--", "sleep", "1"}, 1,
			"swarm: error: not in a git repository (required for --worktree)\nhint: run it inside a git repository, or without a worktree (--no-worktree for ralph spawn)\n"},
		{[]string{"clean", "w1"}, 1, "swarm: error: cannot clean running worker 'w1'\nhint: swarm kill w1, then swarm clean w1\n"},
		{[]string{"peek", "p"}, 1, "swarm: error: worker 'p' is not a tmux worker\nhint: its output is in its log: swarm logs p\n"},
		{[]string{"attach", "w1"}, 1, "swarm: error: swarm attach needs a terminal (standard input is not one)\nhint: run it in a terminal; from a script, read the screen with: swarm peek w1, or follow it with: swarm logs w1 -f\n"},
		// A worker attach could not reach in any terminal says so first.
		{[]string{"attach", "p"}, 1, "swarm: error: worker 'p' is not a tmux worker\nhint: its output is in its log: swarm logs p\n"},
		{[]string{"ralph", "status", "w1"}, 1, "swarm: error: worker 'w1' is not a ralph worker\nhint: swarm ralph ls lists the loops\n"},
		{[]string{"status", "ghost"}, 2, "swarm: error: worker 'ghost' not found\nhint: swarm ls lists the workers\n"},
		{[]string{"spawn", "--name", "x", "--max-time", "5x", "--", "y"}, 2, "swarm: error: invalid --max-time '5x': invalid duration '5x' (see: swarm spawn --help)\n"},
	}
	for _, c := range cases {
		r := e.Run(c.args...)
		if r.Code != c.code || r.Stderr != c.want {
			t.Errorf("swarm %s:\n got %d %q\nwant %d %q", strings.Join(c.args, " "), r.Code, r.Stderr, c.code, c.want)
		}
	}
	e.MustRun("kill", "w1")
	if r := e.Run("send", "w1", "hi"); r.Code != 1 || r.Stderr != "swarm: error: worker 'w1' is not running\nhint: start it again with: swarm respawn w1\n" {
		t.Errorf("send to stopped: %d %q", r.Code, r.Stderr)
	}
}

// A --branch git would read as an option (or refuse) is an error before
// anything is made: no record, no worktree, no branch.
func TestSpawnRefusesABadBranch(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	for _, b := range []string{"--orphan", "a..b", "x y", "-b"} {
		r := e.Run("spawn", "--name", "w", "--tmux", "--worktree", "--branch="+b, "--", "sleep", "300")
		want := "swarm: error: invalid branch name '" + b + "'\nhint: give --branch a valid git branch name\n"
		if r.Code != 1 || r.Stderr != want {
			t.Errorf("--branch=%s: got %d %q, want 1 %q", b, r.Code, r.Stderr, want)
		}
	}
	if w := e.Workers(); len(w) != 0 {
		t.Errorf("records after refused spawns: %v", w)
	}
	if out := e.Git(e.Dir, "worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("worktrees after refused spawns:\n%s", out)
	}
	if out := e.Git(e.Dir, "branch", "--list"); strings.Count(out, "\n") != 1 {
		t.Errorf("branches after refused spawns:\n%s", out)
	}
}
