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
	commit, err := CommitAll(wt, "w", "swarm: loop iteration 3", "DONE")
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

	if commit, err := CommitAll(wt, "w", "nothing", "DONE"); commit != "" || err != nil {
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
	if commit, err := CommitAll(wt, "w", "x"); commit != "" || err == nil || !strings.Contains(err.Error(), "a merge is under way") {
		t.Errorf("CommitAll during a merge: %q, %v", commit, err)
	}
	// b.txt stays unmerged (both sides added it), not staged.
	if st := run(t, wt, "git", "status", "--porcelain"); revParse(t, wt, "HEAD") != head || !strings.Contains(st, "AA b.txt") {
		t.Errorf("CommitAll changed a worktree in the middle of a merge:\n%s", st)
	}
	run(t, wt, "git", "merge", "--abort")

	run(t, wt, "git", "checkout", "-q", "--detach")
	os.WriteFile(filepath.Join(wt, "d.txt"), []byte("d\n"), 0o644)
	if commit, err := CommitAll(wt, "w", "x"); commit != "" || err == nil || !strings.Contains(err.Error(), "is not on branch w") {
		t.Errorf("CommitAll on a detached HEAD: %q, %v", commit, err)
	}
}
