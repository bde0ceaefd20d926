package main

// Black-box tests of what swarm's git commands do to a repository and its
// worktrees: the programs a repository's configuration names never run
// (issue 16, item 3), and commits on no branch are kept (item 7).

import (
	"os"
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
