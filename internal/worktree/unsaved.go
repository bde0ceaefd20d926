package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// checkClean returns a *DirtyError when the worktree at path holds work
// that removing it would lose: what git status shows (changes, untracked
// and git-ignored files), and what it does not (offBranch, nested). A git-ignored
// file that is an unchanged copy of the base repository's (what
// CopyIncluded put there) is no work.
func checkClean(path, base string) error {
	n, ign, err := status(path)
	if err != nil {
		return fmt.Errorf("cannot check %s for uncommitted changes: %w", path, err)
	}
	ign = slices.DeleteFunc(ign, func(name string) bool { return sameAsBase(path, base, name) })
	d := &DirtyError{Path: path, Changes: n, Ignored: len(ign)}
	if len(ign) > 0 {
		d.FirstIgnored = ign[0]
	}
	if err := d.offBranch(path); err != nil {
		return fmt.Errorf("cannot check %s for commits on no branch: %w", path, err)
	}
	if err := d.nested(path); err != nil {
		return fmt.Errorf("cannot check %s for nested repositories: %w", path, err)
	}
	if n > 0 || len(ign) > 0 || d.Unsaved > 0 || d.Rebase || d.Nested > 0 {
		return d
	}
	return nil
}

// nested fills in the populated nested repositories of the worktree at
// path: gitlinks in its index whose directory holds anything. swarm's
// status never looks inside them (ignoreSubmodules), so whatever they hold
// may be work that removing the worktree would delete.
func (d *DirtyError) nested(path string) error {
	out, err := git(path, "ls-files", "-z", "--stage")
	if err != nil {
		return err
	}
	for _, entry := range strings.Split(out, "\x00") {
		// "<mode> <object> <stage>\t<path>"; 160000 is a gitlink.
		meta, name, ok := strings.Cut(entry, "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		p := filepath.Join(path, name)
		if info, err := os.Lstat(p); err != nil || !info.IsDir() {
			continue
		}
		// One that cannot be read counts: it may hold anything.
		if entries, err := os.ReadDir(p); err == nil && len(entries) == 0 {
			continue
		}
		if d.Nested == 0 {
			d.FirstNested = name
		}
		d.Nested++
	}
	return nil
}

// offBranch fills in the work git status does not show: commits made on a
// detached HEAD (or by a rebase, which detaches it) that no branch, tag or
// remote-tracking branch holds, and a rebase or git am under way (its
// state lives in the worktree's git directory, removed with it).
func (d *DirtyError) offBranch(path string) error {
	_, err := git(path, "symbolic-ref", "-q", "HEAD")
	d.Detached = err != nil
	if d.Detached {
		// An unborn HEAD has no commits to lose.
		if _, err := git(path, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err == nil {
			out, err := git(path, "rev-list", "--count", "HEAD", "--not", "--branches", "--tags", "--remotes")
			if err != nil {
				return err
			}
			if d.Unsaved, err = strconv.Atoi(strings.TrimSpace(out)); err != nil {
				return err
			}
			head, _ := git(path, "rev-parse", "--short", "HEAD")
			d.Head = strings.TrimSpace(head)
		}
	}
	out, err := git(path, "rev-parse", "--git-path", "rebase-merge", "--git-path", "rebase-apply")
	if err != nil {
		return err
	}
	for _, p := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !filepath.IsAbs(p) {
			p = filepath.Join(path, p)
		}
		if _, err := os.Stat(p); err == nil {
			d.Rebase = true
		}
	}
	return nil
}

// Holds says in words what work d found, for a message about a kept
// worktree: "uncommitted changes", "commits on no branch", "a rebase in
// progress", "git-ignored files", joined with "and".
func (d *DirtyError) Holds() string {
	var parts []string
	if d.Changes > 0 {
		parts = append(parts, "uncommitted changes")
	}
	if d.Unsaved > 0 {
		parts = append(parts, "commits on no branch")
	}
	if d.Rebase {
		parts = append(parts, "a rebase in progress")
	}
	if d.Nested > 0 {
		parts = append(parts, "a nested git repository")
	}
	if len(parts) == 0 && d.Ignored > 0 {
		parts = append(parts, "git-ignored files")
	}
	return strings.Join(parts, " and ")
}
