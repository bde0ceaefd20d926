package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// noFollow opens a file only if it is no symbolic link.
const noFollow = syscall.O_NOFOLLOW

// IncludeFile names, at the root of a repository, the git-ignored files
// (a .env, local settings) every new worktree gets a copy of. Its lines
// are gitignore patterns; git itself matches them (ls-files), so no
// pattern parser of swarm's can read them differently from git.
const IncludeFile = ".worktreeinclude"

// HasIncludeFile reports whether the repository root has an IncludeFile.
func HasIncludeFile(root string) bool {
	_, err := os.Lstat(filepath.Join(root, IncludeFile))
	return err == nil
}

// Included is what CopyIncluded did: the files copied, and the ones it
// left out with why.
type Included struct {
	Copied  []string
	Skipped []string
}

// CopyIncluded copies into the worktree wt the files of the repository
// root that are git-ignored and match a pattern of its IncludeFile:
// regular files with their permission bits, symbolic links as links
// (never followed). A file the worktree has already (tracked at its
// base) is left as it is, and a path that would lead out of the worktree
// (through a symbolic link checked out there) is refused. No IncludeFile
// copies nothing.
func CopyIncluded(root, wt string) (Included, error) {
	var res Included
	list := filepath.Join(root, IncludeFile)
	fi, err := os.Lstat(list)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if !fi.Mode().IsRegular() {
		return res, fmt.Errorf("%s is not a regular file", list)
	}
	names, err := includedNames(root, list)
	if err != nil {
		return res, fmt.Errorf("cannot list the files %s names: %w", list, err)
	}
	src, err := os.OpenRoot(root)
	if err != nil {
		return res, err
	}
	defer func() { _ = src.Close() }() // a directory handle: the files opened through it are closed each on its own
	dst, err := os.OpenRoot(wt)
	if err != nil {
		return res, err
	}
	defer func() { _ = dst.Close() }() // a directory handle: each copy's close is checked (copyFile)
	for _, name := range names {
		if why := copyOne(src, dst, name); why != "" {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s (%s)", name, why))
			continue
		}
		res.Copied = append(res.Copied, name)
	}
	return res, nil
}

// includedNames lists the untracked files of root that git ignores and
// that list's patterns match: two listings by git, intersected.
func includedNames(root, list string) ([]string, error) {
	ignored, err := git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	matched, err := git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+list)
	if err != nil {
		return nil, err
	}
	isIgnored := map[string]bool{}
	for _, n := range strings.Split(ignored, "\x00") {
		isIgnored[n] = n != ""
	}
	var out []string
	for _, n := range strings.Split(matched, "\x00") {
		if isIgnored[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// copyOne copies name from src to dst and returns "" or why it did not.
// Both are os.Roots: no path, and no symbolic link on it, leads out of
// either tree.
func copyOne(src, dst *os.Root, name string) string {
	if !filepath.IsLocal(name) {
		return "not a path inside the repository"
	}
	fi, err := src.Lstat(name)
	if err != nil {
		return err.Error()
	}
	if _, err := dst.Lstat(name); err == nil {
		return "the worktree has it already"
	}
	if err := dst.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "cannot make its directory in the worktree: " + err.Error()
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := src.Readlink(name)
		if err == nil {
			err = dst.Symlink(target, name)
		}
		if err != nil {
			return err.Error()
		}
		return ""
	case !fi.Mode().IsRegular():
		return "not a regular file"
	}
	return copyFile(src, dst, name, fi.Mode().Perm())
}

// copyFile copies a regular file, made new (O_EXCL: never over a link
// or a file), with mode perm.
func copyFile(src, dst *os.Root, name string, perm fs.FileMode) string {
	in, err := src.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = in.Close() }() // read only: nothing to lose
	out, err := dst.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err.Error()
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The umask may have taken bits the original has.
		err = dst.Chmod(name, perm)
	}
	if err != nil {
		if rerr := dst.Remove(name); rerr != nil {
			return err.Error() + "; and the partial copy could not be removed: " + rerr.Error()
		}
		return err.Error()
	}
	return ""
}

// sameAsBase reports whether the git-ignored entry name of the worktree
// wt is a copy of the base repository's (CopyIncluded's, unchanged): a
// regular file of the same content, or a link to the same target.
// Removing such a copy loses nothing.
func sameAsBase(wt, base, name string) bool {
	if strings.HasSuffix(name, "/") || !filepath.IsLocal(name) || base == "" {
		return false
	}
	a, b := filepath.Join(wt, name), filepath.Join(base, name)
	fa, err1 := os.Lstat(a)
	fb, err2 := os.Lstat(b)
	if err1 != nil || err2 != nil || fa.Mode().Type() != fb.Mode().Type() {
		return false
	}
	if fa.Mode()&fs.ModeSymlink != 0 {
		la, err1 := os.Readlink(a)
		lb, err2 := os.Readlink(b)
		return err1 == nil && err2 == nil && la == lb
	}
	if !fa.Mode().IsRegular() || fa.Size() != fb.Size() || fa.Size() > maxCompare {
		return false
	}
	da, err1 := os.ReadFile(a)
	db, err2 := os.ReadFile(b)
	return err1 == nil && err2 == nil && bytes.Equal(da, db)
}

// maxCompare bounds the files sameAsBase compares: included files are
// settings, and a large one is taken for work of its own.
const maxCompare = 16 << 20
