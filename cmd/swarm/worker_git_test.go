package main

// Black-box tests of what swarm's git commands do to a repository and its
// worktrees: the programs a repository's configuration names never run
// (issue 16, item 3), and commits on no branch are kept (item 7).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/testenv"
)

// wkHostileGitConfig points every program a repository's configuration
// can name (core.fsmonitor, hooks through core.hooksPath and in
// .git/hooks, a required filter driver applied by .gitattributes,
// diff.external) at a script that appends its name to the returned marker
// file, as an agent with write access to .git could. The files are
// committed first, so only swarm's commands meet the programs.
func wkHostileGitConfig(t *testing.T, e *testenv.Env) (marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	payload := func(name string) string {
		p := filepath.Join(dir, name)
		testenv.WriteExecutable(t, p, "#!/bin/sh\necho "+name+" >> "+marker+"\ncat\n")
		return p
	}
	e.WriteFile(".gitattributes", "*.txt filter=evil\n")
	e.WriteFile("a.txt", "a\n")
	e.Git(e.Dir, "add", ".")
	e.Git(e.Dir, "commit", "-q", "-m", "attributes")
	hooks := filepath.Join(dir, "hooks")
	os.Mkdir(hooks, 0o755)
	for _, h := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		testenv.WriteExecutable(t, filepath.Join(hooks, h), "#!/bin/sh\necho hook-"+h+" >> "+marker+"\n")
		testenv.WriteExecutable(t, filepath.Join(e.Dir, ".git", "hooks", h), "#!/bin/sh\necho hook-"+h+" >> "+marker+"\n")
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", payload("fsmonitor")},
		{"core.hooksPath", hooks},
		{"filter.evil.clean", payload("clean")},
		{"filter.evil.smudge", payload("smudge")},
		{"filter.evil.required", "true"},
		{"diff.external", payload("extdiff")},
	} {
		e.Git(e.Dir, "config", kv[0], kv[1])
	}
	return marker
}

// TestWorkerGitRunsNoRepositoryProgram (issue 16, item 3): spawn
// --worktree, kill --rm-worktree, clean and respawn --clean-first in a
// repository whose configuration names programs (what a sandboxed agent
// with a writable .git planted) run none of them.
func TestWorkerGitRunsNoRepositoryProgram(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	marker := wkHostileGitConfig(t, e)

	path := wkWorktreePath(e, "w")
	wkSpawnProcess(t, e, "--name", "w", "--worktree", "--", "sleep", "300")
	if data, err := os.ReadFile(filepath.Join(path, "a.txt")); err != nil || string(data) != "a\n" {
		t.Fatalf("a.txt in the worktree: %q %v", data, err)
	}
	// A newer mtime makes git read the file again (through the clean
	// filter, were it on) to see whether it changed.
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(path, "a.txt"), later, later)
	wkExpect(t, "kill --rm-worktree", e.Run("kill", "--rm-worktree", "w"), 0, "killed w\n", "")
	if wkExists(path) {
		t.Errorf("kill --rm-worktree left the clean worktree %s", path)
	}
	wkExpect(t, "clean", e.Run("clean", "w"), 0, "cleaned w\n", "")

	wkSpawnProcess(t, e, "--name", "r", "--worktree", "--", "sleep", "300")
	os.Chtimes(filepath.Join(wkWorktreePath(e, "r"), "a.txt"), later, later)
	if r := e.Run("respawn", "--clean-first", "r"); r.Code != 0 {
		t.Errorf("respawn --clean-first: %s", r)
	}
	e.MustRun("kill", "r")
	wkExpect(t, "clean r", e.Run("clean", "r"), 0, "cleaned r\n", "")
	if wkExists(wkWorktreePath(e, "r")) {
		t.Errorf("clean left the worktree of r")
	}

	if data, _ := os.ReadFile(marker); len(data) > 0 {
		t.Errorf("swarm's git commands ran programs the repository's configuration names:\n%s", data)
	}
}

// With SWARM_GIT_TRUST_REPO=1 the repository's hooks run as with a plain
// git command (a post-checkout hook that sets up each new worktree).
func TestWorkerGitTrustRepoRunsHooks(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	marker := wkHostileGitConfig(t, e)
	e.Extra = append(e.Extra, "SWARM_GIT_TRUST_REPO=1")
	wkSpawnProcess(t, e, "--name", "w", "--worktree", "--", "sleep", "300")
	if data, _ := os.ReadFile(marker); !strings.Contains(string(data), "hook-post-checkout") {
		t.Errorf("with SWARM_GIT_TRUST_REPO=1 the post-checkout hook did not run (ran: %q)", data)
	}
	e.MustRun("kill", "w")
}

// TestWorkerKeepsCommitsOnNoBranch (issue 16, item 7): commits made on a
// detached HEAD, which git status does not show, and a rebase under way
// are work: kill --rm-worktree, clean and respawn --clean-first keep the
// worktree and say why, unless --force-dirty.
func TestWorkerKeepsCommitsOnNoBranch(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.InitRepo()
	detachAndCommit := func(name string) (path, head string) {
		path = wkWorktreePath(e, name)
		e.Git(path, "checkout", "-q", "--detach")
		e.Git(path, "commit", "-q", "--allow-empty", "-m", "work of "+name)
		return path, strings.TrimSpace(e.Git(path, "rev-parse", "--short", "HEAD"))
	}

	wkSpawnProcess(t, e, "--name", "k", "--worktree", "--", "sleep", "300")
	path, head := detachAndCommit("k")
	why := "worktree has 1 commit(s) on no branch (HEAD detached at " + head + ")"
	wkExpect(t, "kill --rm-worktree", e.Run("kill", "--rm-worktree", "k"), 0, "killed k\n",
		"swarm: warning: cannot remove worktree for 'k': "+why+"\n")
	wkExpect(t, "clean", e.Run("clean", "k"), 0,
		"kept worktree of k with commits on no branch: "+path+"\n"+
			"  keep its commits on a branch with: git -C "+wkShellQuote(path)+" branch NEW-BRANCH HEAD\n"+
			"  remove it (losing that work) with: git -C "+wkShellQuote(e.Dir)+" worktree remove --force "+wkShellQuote(path)+"\n"+
			"cleaned k\n",
		"swarm: warning: cannot remove worktree for 'k': "+why+"\n")
	if got := strings.TrimSpace(e.Git(path, "log", "-1", "--format=%s")); got != "work of k" {
		t.Errorf("the commit on no branch is gone: HEAD is %q", got)
	}

	wkSpawnProcess(t, e, "--name", "r", "--worktree", "--", "sleep", "300")
	path, head = detachAndCommit("r")
	wkExpect(t, "respawn --clean-first", e.Run("respawn", "--clean-first", "r"), 1, "",
		"swarm: error: cannot remove worktree for 'r': worktree has 1 commit(s) on no branch (HEAD detached at "+head+") (use --force-dirty to discard it)\n")
	if !wkExists(path) {
		t.Errorf("respawn --clean-first removed the worktree with a commit on no branch")
	}
	if r := e.Run("respawn", "--clean-first", "--force-dirty", "r"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "respawned r (pid: ") {
		t.Errorf("respawn --clean-first --force-dirty: %s", r)
	}
	e.MustRun("kill", "r")

	// A rebase stopped at an "edit": nothing for git status, HEAD at a
	// commit the branch holds, the rebase's state in the worktree.
	wkSpawnProcess(t, e, "--name", "b", "--worktree", "--", "sleep", "300")
	path = wkWorktreePath(e, "b")
	e.Git(path, "commit", "-q", "--allow-empty", "-m", "b1")
	rebase := exec.Command("git", "-c", "user.email=t@t", "-c", "user.name=t", "rebase", "-q", "-i", "HEAD~1")
	rebase.Dir = path
	rebase.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1s/^pick/edit/")
	if out, err := rebase.CombinedOutput(); err != nil {
		t.Fatalf("rebase: %v\n%s", err, out)
	}
	wkExpect(t, "kill --rm-worktree during a rebase", e.Run("kill", "--rm-worktree", "b"), 0, "killed b\n",
		"swarm: warning: cannot remove worktree for 'b': worktree has a rebase in progress\n")
	wkExpect(t, "clean --force-dirty", e.Run("clean", "--force-dirty", "b"), 0, "cleaned b\n", "")
	if wkExists(path) {
		t.Errorf("clean --force-dirty kept %s", path)
	}
}
