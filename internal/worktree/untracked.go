package worktree

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Untracked files (neither committed nor git-ignored) are no part of a
// merge: it takes the branch's commits. They keep nothing from being
// merged, unless one sits where the merge writes: in the checkout of the
// target, which the fast-forward would have to overwrite (git refuses),
// or in the worker's worktree, whose own uncommitted version of that file
// would be left out unseen.

// UntrackedError is a merge stopped by untracked files at paths it would
// write: in the worker's worktree (Worker) or in the checkout of the
// target. Nothing was changed.
type UntrackedError struct {
	Dir    string
	Worker bool
	Files  []string
}

func (e *UntrackedError) Error() string {
	where := "the checkout of the target " + e.Dir
	if e.Worker {
		where = "the worker's worktree " + e.Dir
	}
	return fmt.Sprintf("%d untracked file(s) in %s at paths the merge would write: %s; nothing was changed",
		len(e.Files), where, strings.Join(e.Files, ", "))
}

// Untracked lists the untracked files of the worktree at path (each file,
// not its directory; git-ignored ones are not listed), in git's order.
func Untracked(path string) ([]string, error) {
	out, err := git(path, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, fmt.Errorf("cannot list the untracked files of %s: %w", path, err)
	}
	return nulFields(out), nil
}

// nulFields splits git's -z output.
func nulFields(out string) []string {
	var names []string
	for _, n := range strings.Split(out, "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names
}

// checkUntracked returns an *UntrackedError (two, joined, when both
// places have one) when an untracked file of the
// worker's worktree (o.Worktree, when it is there) or of the target's
// checkout (checkout, "" for none) sits at a path that the merge from
// old to commit writes: that path, a directory above it, or a file below
// it.
func checkUntracked(o MergeOptions, checkout, old, commit string) error {
	written, err := writtenPaths(o.Repo, old, commit)
	if err != nil {
		return err
	}
	var found []error
	for _, dir := range []struct {
		path   string
		worker bool
	}{{o.Worktree, true}, {checkout, false}} {
		if dir.path == "" {
			continue
		}
		if _, err := os.Stat(dir.path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		untracked, err := Untracked(dir.path)
		if err != nil {
			return err
		}
		if in := inTheWay(untracked, written); len(in) > 0 {
			found = append(found, &UntrackedError{Dir: dir.path, Worker: dir.worker, Files: in})
		}
	}
	// Both places are named: a dry run shows every file in the way.
	return errors.Join(found...)
}

// writtenPaths lists the paths the merge from old to commit writes.
func writtenPaths(repo, old, commit string) ([]string, error) {
	out, err := git(repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old, commit)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files the merge writes: %w", err)
	}
	return nulFields(out), nil
}

// inTheWay lists the names (files, or directories ending in "/": a nested
// repository, a git-ignored directory) that sit at a written path, a
// directory above one, or a file below one.
func inTheWay(names, written []string) []string {
	var in []string
	for _, name := range names {
		u := strings.TrimSuffix(name, "/")
		for _, w := range written {
			if u == w || strings.HasPrefix(w, u+"/") || strings.HasPrefix(u, w+"/") {
				in = append(in, name)
				break
			}
		}
	}
	return in
}
