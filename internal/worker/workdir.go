package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// CheckWorkDir refuses a recorded working directory another user may have
// made, before a worker or loop is started in it again (restore, respawn,
// ralph resume): after a reboot a directory under /tmp is gone, and
// another user can make one of the same name, with a Makefile or an
// .envrc the agent would run as the user. The directory and every
// directory above it (and every symbolic link on the way, and what it
// points to) must be the user's or root's; the directory must not be
// writable by others, nor by its group unless that group is the user's
// own; a directory above it writable by others must be sticky (/tmp),
// where nobody else can move the user's directory away. It is the rule
// <repo>-worktrees is held to (worktree.ensureParent), with umask 002's
// group of one allowed. A directory that is gone is left to the caller.
// instead is the command that starts the work elsewhere, for the hint.
func CheckWorkDir(dir, instead string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return nil
	}
	dir = filepath.Clean(dir)
	if err := checkPathOwners(dir, dir, instead); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if real != dir {
		return checkPathOwners(real, real, instead)
	}
	return nil
}

// checkPathOwners checks every element of the absolute path p, from the
// root down, as it is (Lstat: a link is judged as a link); dir is the
// directory the worker runs in.
func checkPathOwners(p, dir, instead string) error {
	var elems []string
	for e := p; ; e = filepath.Dir(e) {
		elems = append(elems, e)
		if e == filepath.Dir(e) {
			break
		}
	}
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		fi, err := os.Lstat(e)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkDirElem(e, fi, e == dir, instead); err != nil {
			return err
		}
	}
	return nil
}

// checkDirElem judges one element of a working directory's path.
func checkDirElem(e string, fi fs.FileInfo, last bool, instead string) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(st.Uid); uid != os.Geteuid() && uid != 0 {
		return hint.Errorf(fmt.Sprintf("another user may have made it (after a reboot, say); nothing was started in it: look at what it holds, or %s", instead),
			"directory %s is owned by another user (uid %d)", e, uid)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil // a link's own mode means nothing; what it points to is checked
	}
	perm := fi.Mode().Perm()
	sticky := fi.Mode()&fs.ModeSticky != 0 && !last
	groupOwn := int(st.Gid) == os.Getegid()
	if perm&0o002 != 0 && !sticky || perm&0o020 != 0 && !groupOwn && !sticky {
		return hint.Errorf(fmt.Sprintf("chmod go-w %s if it is yours (whoever can write it could have put a directory of theirs in its place), or %s", tmux.ShellQuote(e), instead),
			"directory %s is writable by others (mode %04o)", e, perm)
	}
	return nil
}

// checkWorkDirsOf checks the directories worker w is started in again
// (CheckWorkDir): its directory, or its worktree and the repository
// swarm's git runs in.
func checkWorkDirsOf(w *state.Worker) error {
	instead := fmt.Sprintf("swarm clean %s and spawn it again from a directory of your own", w.Name)
	dirs := []string{w.Cwd}
	if w.Worktree != nil {
		dirs = []string{w.Worktree.BaseRepo, w.Worktree.Path}
	}
	for _, d := range dirs {
		if err := CheckWorkDir(d, instead); err != nil {
			return err
		}
	}
	return nil
}
