package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitAll (issue 27, item 8, --auto-commit): changes and untracked
// files are committed on the branch with the message, git-ignored files
// and the files left out (a done file) are not, no hook runs; nothing to commit makes no commit; a worktree
// off its branch or in the middle of a merge is left as it is.
func TestCommitAll(t *testing.T) {
	repo, wt := mergeRepo(t)
	commitFile(t, repo, ".gitignore", "secret.env\n")
	run(t, wt, "git", "merge", "-q", "main")
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+filepath.Join(repo, "hook-ran")+"\nexit 1\n"), 0o755)
	run(t, repo, "git", "config", "core.hooksPath", filepath.Join(repo, ".git", "hooks"))

	os.WriteFile(filepath.Join(wt, "b.txt"), []byte("changed\n"), 0o644)
	os.MkdirAll(filepath.Join(wt, "new"), 0o755)
	os.WriteFile(filepath.Join(wt, "new", "c.txt"), []byte("new\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "secret.env"), []byte("KEY=1\n"), 0o644)
	os.WriteFile(filepath.Join(wt, "DONE"), nil, 0o644)
	commit, err := CommitAll(repo, wt, "w", "swarm: loop iteration 3", "DONE")
	if err != nil || commit == "" || commit != revParse(t, wt, "w") {
		t.Fatalf("CommitAll: %q, %v (w is at %s)", commit, err, revParse(t, wt, "w"))
	}
	if got := run(t, wt, "git", "show", "--name-only", "--format=%s", "HEAD"); got != "swarm: loop iteration 3\n\nb.txt\nnew/c.txt\n" {
		t.Errorf("the commit: %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "hook-ran")); err == nil {
		t.Error("the repository's pre-commit hook ran")
	}
	if got := run(t, wt, "git", "status", "--porcelain", "--ignored"); got != "?? DONE\n!! secret.env\n" {
		t.Errorf("left after the commit: %q", got)
	}

	os.Remove(hook)

	if commit, err := CommitAll(repo, wt, "w", "nothing", "DONE"); commit != "" || err != nil {
		t.Errorf("CommitAll with nothing to commit: %q, %v", commit, err)
	}

	// A merge that stopped at a conflict is the agent's to finish.
	commitFile(t, repo, "b.txt", "main's\n")
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "main")
	cmd.Dir = wt
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict:\n%s", out)
	}
	head := revParse(t, wt, "HEAD")
	if commit, err := CommitAll(repo, wt, "w", "x"); commit != "" || err == nil || !strings.Contains(err.Error(), "a merge is under way") {
		t.Errorf("CommitAll during a merge: %q, %v", commit, err)
	}
	// b.txt stays unmerged (both sides added it), not staged.
	if st := run(t, wt, "git", "status", "--porcelain"); revParse(t, wt, "HEAD") != head || !strings.Contains(st, "AA b.txt") {
		t.Errorf("CommitAll changed a worktree in the middle of a merge:\n%s", st)
	}
	run(t, wt, "git", "merge", "--abort")

	run(t, wt, "git", "checkout", "-q", "--detach")
	os.WriteFile(filepath.Join(wt, "d.txt"), []byte("d\n"), 0o644)
	if commit, err := CommitAll(repo, wt, "w", "x"); commit != "" || err == nil || !strings.Contains(err.Error(), "is not on branch w") {
		t.Errorf("CommitAll on a detached HEAD: %q, %v", commit, err)
	}
}

// TestCommitAllLeavesIncludedCopiesOut (issue 27, item 8): the files
// .worktreeinclude copied into the worktree (the user's .env) are never
// committed, even once the agent's .gitignore no longer ignores them (a
// project template's .gitignore written over the old one): merged into
// the base, the secret would be in its history.
func TestCommitAllLeavesIncludedCopiesOut(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	commitFile(t, repo, ".gitignore", ".env\nconf/*.local\n")
	os.WriteFile(filepath.Join(repo, ".worktreeinclude"), []byte(".env\nconf/\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".env"), []byte("TOKEN=secret\n"), 0o600)
	os.MkdirAll(filepath.Join(repo, "conf"), 0o755)
	os.WriteFile(filepath.Join(repo, "conf", "db.local"), []byte("PASSWORD=x\n"), 0o600)
	info, err := Create(repo, DefaultPath(repo, "w"), "w")
	if err != nil {
		t.Fatal(err)
	}
	if inc, err := CopyIncluded(repo, info.Path); err != nil || len(inc.Copied) != 2 {
		t.Fatalf("CopyIncluded = %+v, %v", inc, err)
	}
	os.WriteFile(filepath.Join(info.Path, ".gitignore"), []byte("node_modules/\n"), 0o644)
	os.WriteFile(filepath.Join(info.Path, "app.js"), []byte("x\n"), 0o644)
	run(t, repo, "git", "config", "user.name", "t")
	run(t, repo, "git", "config", "user.email", "t@t")
	if _, err := CommitAll(repo, info.Path, "w", "swarm: loop iteration 1"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, info.Path, "git", "show", "--name-only", "--format=", "HEAD"); got != ".gitignore\napp.js\n" {
		t.Errorf("committed: %q, want .gitignore and app.js only", got)
	}
}
