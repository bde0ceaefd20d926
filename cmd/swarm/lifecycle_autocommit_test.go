package main

// Black-box tests of issue 27, item 8: untracked files do not stop an
// on-complete merge, and --auto-commit commits each iteration's work.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/swarmtools/swarm/internal/testenv"
)

// lcAutoRepo is a repository with a git identity, a committed prompt and
// a .gitignore of secret.env.
func lcAutoRepo(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	e := testenv.New(t)
	e.InitRepo()
	e.Git(e.Dir, "config", "user.name", "Night")
	e.Git(e.Dir, "config", "user.email", "night@example.com")
	prompt := e.WriteFile("PROMPT.md", "work\n")
	e.WriteFile(".gitignore", "secret.env\n")
	e.Git(e.Dir, "add", "PROMPT.md", ".gitignore")
	e.Git(e.Dir, "commit", "-qm", "prompt")
	return e, prompt
}

// TestLoopOnCompleteMergesWithUntrackedFiles: the agent leaves an
// untracked scratch file beside the work a --check commits; the loop's
// on-complete merge is done (it was refused as "uncommitted"), without
// the scratch file.
func TestLoopOnCompleteMergesWithUntrackedFiles(t *testing.T) {
	t.Parallel()
	e, prompt := lcAutoRepo(t)
	e.MustRun("ralph", "spawn", "--name", "night", "--prompt-file", prompt, "--max-iterations", "3",
		"--on-complete", "merge", "--check", "git add night.txt && git commit -qm 'night work'",
		"--", e.Agent, "--script", "touch night.txt;touch scratch.txt;print <promise>COMPLETE</promise>;quiet")
	if r := e.Run("ralph", "wait", "night", "--timeout", "60"); r.Code != 0 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog("night"))
	}
	e.Eventually("the on-complete merge", wkTimeout, func() bool { return strings.Contains(e.RalphLog("night"), "[MERGE]") })
	if log := e.RalphLog("night"); !strings.Contains(log, "[MERGE] on-complete merge: merged night into main (merge, 1 commit(s)): ") {
		t.Fatalf("iterations.log:\n%s", log)
	}
	if got := e.Git(e.Dir, "ls-tree", "-r", "--name-only", "main"); got != ".gitignore\nPROMPT.md\nREADME\nnight.txt\n" {
		t.Errorf("main's files: %q (the untracked scratch.txt is not merged)", got)
	}
}

// TestLoopAutoCommit: with --auto-commit each iteration's work (changes
// and untracked files, not git-ignored ones, nor the done file) is
// committed on the loop's branch as "swarm: LOOP iteration N", logged
// (COMMIT), kept in the loop's state (restore and resume keep it), and
// the on-complete merge takes all of it.
func TestLoopAutoCommit(t *testing.T) {
	t.Parallel()
	e, prompt := lcAutoRepo(t)
	counter := filepath.Join(t.TempDir(), "n")
	e.MustRun("ralph", "spawn", "--name", "ac", "--prompt-file", prompt, "--max-iterations", "3",
		"--auto-commit", "--on-complete", "squash", "--done-file", "DONE",
		"--", e.Agent, "--counter", counter, "--iter", "1=touch one.txt;touch secret.env;exit 0",
		"--script", "touch two.txt;touch DONE;quiet")
	if st := e.RalphState("ac"); st["auto_commit"] != true {
		t.Errorf("the loop's state lacks auto_commit: %v", st["auto_commit"])
	}
	if r := e.Run("ralph", "wait", "ac", "--timeout", "60"); r.Code != 0 {
		t.Fatalf("ralph wait: %s\n%s", r, e.RalphLog("ac"))
	}
	e.Eventually("the on-complete merge", wkTimeout, func() bool { return strings.Contains(e.RalphLog("ac"), "[MERGE]") })
	log := e.RalphLog("ac")
	if !strings.Contains(log, "[COMMIT] iteration 1 committed ") || !strings.Contains(log, "[COMMIT] iteration 2 committed ") ||
		!strings.Contains(log, "[MERGE] on-complete merge: merged ac into main (squash, 2 commit(s)): ") {
		t.Fatalf("iterations.log:\n%s", log)
	}
	if got := e.Git(e.Dir, "log", "--format=%s", "main..ac"); got != "swarm: ac iteration 2\nswarm: ac iteration 1\n" {
		t.Errorf("the loop's branch: %q", got)
	}
	if got := e.Git(e.Dir, "show", "--name-only", "--format=", "ac~1"); got != "one.txt\n" {
		t.Errorf("iteration 1's commit holds %q (secret.env is git-ignored)", got)
	}
	if got := e.Git(e.Dir, "ls-tree", "-r", "--name-only", "main"); got != ".gitignore\nPROMPT.md\nREADME\none.txt\ntwo.txt\n" {
		t.Errorf("main's files after the merge: %q (not the done file)", got)
	}
}

// TestLoopAutoCommitNeedsIdentity: without a git identity to commit
// with, ralph spawn --auto-commit is refused before it makes anything.
func TestLoopAutoCommitNeedsIdentity(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	prompt := e.WriteFile("PROMPT.md", "work\n")
	e.Extra = append(e.Extra, "GIT_CONFIG_GLOBAL="+filepath.Join(t.TempDir(), "none"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL=")
	r := e.Run("ralph", "spawn", "--name", "ac", "--prompt-file", prompt, "--auto-commit", "--", e.Agent)
	wkExpect(t, "--auto-commit without an identity", r, 1, "",
		"swarm: error: --auto-commit: no git identity to commit with (user.name and user.email are not set)\n"+
			`hint: git config --global user.name "Your Name"; git config --global user.email you@example.com`+"\n")
	if len(e.Workers()) != 0 || e.RalphState("ac") != nil {
		t.Error("a refused --auto-commit left a worker or a loop")
	}
}
