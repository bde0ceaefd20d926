package worktree

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// IsBranch reports whether name is a local branch of repo.
func IsBranch(repo, name string) bool {
	return !strings.HasPrefix(name, "-") && branchExists(repo, name)
}

// IsCommit reports whether ref names a commit in repo.
func IsCommit(repo, ref string) bool {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return false
	}
	_, err := git(repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}

// Diff is the change of branch since it left base (their merge base): in
// the worktree at path when it is there, with what is not committed yet
// (tracked files; untracked ones are not in a diff), else of the branch
// alone. stat gives git's diffstat instead of the patch. External diff
// and textconv programs never run.
func Diff(repo, path, branch, base string, stat bool) (string, error) {
	if !IsCommit(repo, base) {
		return "", fmt.Errorf("the base %s is not a commit of %s", base, repo)
	}
	if err := CheckBranch(repo, branch); err != nil {
		return "", err
	}
	tip := "refs/heads/" + branch
	out, err := git(repo, "merge-base", base, tip)
	if err != nil {
		return "", fmt.Errorf("branch %s and %s have no commit in common: %w", branch, base, err)
	}
	mb := strings.TrimSpace(out)
	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	if stat {
		args = append(args, "--stat")
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || CurrentBranch(path) != branch {
		return git(repo, append(args, mb, tip)...)
	}
	return git(path, append(args, mb)...)
}
