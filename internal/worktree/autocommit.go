package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/swarmtools/swarm/internal/hint"
)

// CheckIdentity returns an error with its fix when git has no identity
// to commit with in dir (user.name and user.email, or the committer's
// environment): a loop with --auto-commit would fail to commit at every
// iteration's end.
func CheckIdentity(dir string) error {
	_, err := commitIdentity(dir)
	return err
}

// commitIdentity is identity, with an error that speaks of commits, not
// of a merge's.
func commitIdentity(dir string) ([]string, error) {
	ident, err := identity(dir)
	if err != nil {
		return nil, hint.Wrap(errors.New("no git identity to commit with (user.name and user.email are not set)"), "%s", hint.Of(err))
	}
	return ident, nil
}

// CommitAll commits everything the worktree at path holds that its branch
// does not, tracked or untracked (git add -A: git-ignored files stay out),
// with message, on branch, with the user's git identity; no hook runs, no
// signature is made. It returns the new commit ("" when there was nothing
// to commit). It commits nothing when HEAD is not on branch, or a merge,
// rebase, cherry-pick or revert is under way: its half-done state is the
// agent's to finish, and a commit would seal conflict markers in.
//
// leave are paths (relative to path) never committed: the loop's done
// file, which merged into the base would end the next loop there at once.
// Nor are the untracked files the base repository's IncludeFile names
// (repo: its root): the copies of the user's local files (a .env) made
// into the worktree, which are the user's, not the agent's work, and stay
// out even when the agent's .gitignore no longer ignores them.
func CommitAll(repo, path, branch, message string, leave ...string) (string, error) {
	if cur := CurrentBranch(path); cur != branch {
		return "", fmt.Errorf("not committed: the worktree %s is not on branch %s", path, branch)
	}
	if op := operation(path); op != "" {
		return "", fmt.Errorf("not committed: a %s is under way in the worktree %s", op, path)
	}
	ident, err := commitIdentity(path)
	if err != nil {
		return "", err
	}
	copies, err := includedCopies(repo, path)
	if err != nil {
		return "", err
	}
	add := []string{"-c", "advice.addEmbeddedRepo=false", "add", "-A", "--", "."}
	for _, l := range append(leave, copies...) {
		add = append(add, ":(exclude,literal)"+l)
	}
	if _, err := git(path, add...); err != nil {
		return "", fmt.Errorf("cannot stage the worktree's changes: %w", err)
	}
	if _, err := git(path, "diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=dirty"); err == nil {
		return "", nil
	}
	args := append(ident, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message)
	if _, err := git(path, args...); err != nil {
		return "", fmt.Errorf("cannot commit the worktree's changes: %w", err)
	}
	return Head(path), nil
}

// operation names the git operation under way in the worktree at path
// ("" for none): its state lives in the worktree's git directory.
func operation(path string) string {
	d := &DirtyError{}
	if err := d.offBranch(path); err == nil && d.Rebase {
		return "rebase"
	}
	for _, op := range []struct{ ref, name string }{
		{"MERGE_HEAD", "merge"}, {"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
	} {
		if _, err := git(path, "rev-parse", "-q", "--verify", op.ref); err == nil {
			return op.name
		}
	}
	return ""
}

// includedCopies lists the untracked files of the worktree at path that
// the IncludeFile of the repository root repo names, ignored or not.
func includedCopies(repo, path string) ([]string, error) {
	list := filepath.Join(repo, IncludeFile)
	if fi, err := os.Lstat(list); err != nil || !fi.Mode().IsRegular() {
		return nil, nil // none (CopyIncluded copied nothing either)
	}
	out, err := git(path, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+list)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files %s names: %w", list, err)
	}
	return nulFields(out), nil
}
