package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/swarmtools/swarm/internal/hint"
)

// TrustSharedRootEnv names the opt-in to a state root that other users
// own or can write (a team directory, SWARM_HOME under /tmp): with it set
// to 1, swarm uses such a root and the files in it as its own. Anyone who
// can write a state root can make swarm run commands as the user (a
// worker's command, a loop's checks and hooks are stored there), so this is
// only for a root shared with people trusted that far. Symbolic links,
// FIFOs and devices are refused and reads bounded with it too, and a
// config.json hook is never run from a file of another user's.
const TrustSharedRootEnv = "SWARM_TRUST_SHARED_ROOT"

// TrustSharedRoot reports whether the user opted in to a shared state root.
func TrustSharedRoot() bool { return os.Getenv(TrustSharedRootEnv) == "1" }

// MaxFileSize bounds every file swarm reads whole from the state root (the
// registry, a loop's state, its delivered prompt, heartbeats, config.json).
// The largest real one is a registry of thousands of workers or a prompt
// with its feedback, a few MB; a larger file is not swarm's, and reading
// it must not take the memory of every command that lists workers. A
// variable so tests can make it small.
var MaxFileSize int64 = 64 << 20

// ErrUnsafe marks a file or directory swarm refuses to use: a symbolic
// link, not a regular file, too large, or (without TrustSharedRoot) owned
// or writable by another user. It comes as an *UnsafeError with the fix.
var ErrUnsafe = errors.New("unsafe path in the state root")

// UnsafeError says which path is refused and why.
type UnsafeError struct {
	What    string // "state root", "state directory", "state file"
	Path    string
	Problem string // "is writable by others (mode 0777)"
}

func (e *UnsafeError) Error() string { return e.What + " " + e.Path + " " + e.Problem }

// Is makes errors.Is(err, ErrUnsafe) true.
func (e *UnsafeError) Is(target error) bool { return target == ErrUnsafe }

// refuse returns an *UnsafeError with its fix attached (hint.Of), when
// there is one.
func refuse(what, path, problem, fix string) error {
	err := &UnsafeError{What: what, Path: path, Problem: problem}
	if fix == "" {
		return err
	}
	return hint.Wrap(err, "%s", fix)
}

// openFlags are added to every open of a file in the state root. O_NOFOLLOW:
// a symbolic link planted at the path is never followed (swarm would
// append to, truncate or create the file it points to). O_NONBLOCK: a FIFO
// opens at once instead of blocking until a writer comes, and is then
// refused as not a regular file. O_NOCTTY: a terminal device never becomes
// the controlling terminal. O_CLOEXEC: no agent or hook inherits it.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC

// OpenFile opens a file in the state root as os.OpenFile does, but only a
// regular file reached without following a symbolic link at path, and
// (unless TrustSharedRoot) only one the user owns that group and others
// cannot write. O_TRUNC is applied once the file has passed, so a refused
// file is never emptied.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openChecked("state file", path, flag, perm, !TrustSharedRoot())
}

// OpenRegular is OpenFile for files outside the state root that swarm
// reads or updates in a project (AGENTS.md, the sandbox kit): a regular
// file, never through a symbolic link, whoever owns it.
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openChecked("file", path, flag, perm, false)
}

// openChecked opens path with openFlags and refuses what is not a regular
// file or, with owned, not the user's own.
func openChecked(what, path string, flag int, perm os.FileMode, owned bool) (*os.File, error) {
	f, err := os.OpenFile(path, flag&^os.O_TRUNC|openFlags, perm)
	if err != nil {
		return nil, openError(what, path, err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(what, path, fi, owned)
	}
	if err == nil && flag&os.O_TRUNC != 0 {
		err = f.Truncate(0)
	}
	if err == nil {
		// Back to blocking: the descriptor may be handed to a child
		// (a process worker's log) that does not expect O_NONBLOCK.
		err = syscall.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// checkRegular refuses fi, the file opened at path, unless it is a
// regular file and, with owned, the user's own and not writable by others.
func checkRegular(what, path string, fi fs.FileInfo, owned bool) error {
	if !fi.Mode().IsRegular() {
		return refuse(what, path, fmt.Sprintf("is not a regular file (%s)", typeName(fi.Mode())),
			fmt.Sprintf("swarm reads and writes only regular files; remove it (rm %s)", path))
	}
	if !owned {
		return nil
	}
	if problem := untrusted(fi); problem != "" {
		return refuse(what, path, problem, fileFix(what, path, fi))
	}
	return nil
}

// openError is err from opening path with openFlags, said plainly when
// what is there is a symbolic link (ELOOP; EMLINK on some BSDs) or not a
// regular file (a FIFO opened for writing with no reader gives ENXIO).
func openError(what, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, lerr := os.Lstat(path)
	switch {
	case lerr != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return symlinkError(what, path)
	case !fi.Mode().IsRegular():
		return checkRegular(what, path, fi, false)
	}
	return err
}

// symlinkError refuses a symbolic link where swarm expects a file.
func symlinkError(what, path string) error {
	return refuse(what, path, "is a symbolic link",
		fmt.Sprintf("swarm never reads or writes through a symbolic link; replace it with a regular file or remove it (rm %s)", path))
}

// typeName names a file type for an error.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

// owner returns the uid owning fi; ok is false where the system does not
// say (then nothing is refused for it).
func owner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// untrusted says why fi may have been written by someone else than the
// user: it belongs to another user, or group or others may write it. ""
// when neither.
func untrusted(fi fs.FileInfo) string {
	if uid, ok := owner(fi); ok && int(uid) != os.Geteuid() {
		return fmt.Sprintf("is owned by another user (uid %d)", uid)
	}
	if perm := fi.Mode().Perm(); perm&othersWrite != 0 {
		return fmt.Sprintf("is writable by others (mode %04o)", perm)
	}
	return ""
}

// fileFix is the hint for a state file another user owns or may write.
// config.json holds a hook: no opt-in makes swarm run another user's.
func fileFix(what, path string, fi fs.FileInfo) string {
	uid, ok := owner(fi)
	foreign := ok && int(uid) != os.Geteuid()
	if what == "config file" {
		fix := fmt.Sprintf("chmod 600 %s", path)
		if foreign {
			fix = "read it, then replace it with a file of your own"
		}
		return "swarm never runs a hook from a config file another user owns or can write: " + fix + ", or set SWARM_ON_EXIT"
	}
	if foreign {
		return fmt.Sprintf("another user could have written it; remove it if you do not trust it, or set %s=1 if everyone who can write this state root is trusted", TrustSharedRootEnv)
	}
	return fmt.Sprintf("chmod 600 %s, or set %s=1 if everyone who can write this state root is trusted", path, TrustSharedRootEnv)
}

// ReadFile reads a whole file in the state root through OpenFile: at most
// max bytes, a larger file is refused (never read into memory).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	return readBounded("state file", f, max)
}

// ReadRegular is ReadFile for a project file (OpenRegular).
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	return readBounded("file", f, max)
}

// readBounded reads f whole, refusing more than max bytes: the size is
// checked first, and the read stops after max+1 bytes in case the file
// grows meanwhile.
func readBounded(what string, f *os.File, max int64) ([]byte, error) {
	size := int64(0)
	if fi, err := f.Stat(); err == nil {
		if size = fi.Size(); size > max {
			return nil, tooLarge(what, f.Name(), fmt.Sprintf("%d bytes", size), max)
		}
	}
	// Read into a buffer of the file's size (and a little, to see the
	// end, or growth), not one grown from 512 bytes by doubling.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(f, max+1))
	data := buf.Bytes()
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLarge(what, f.Name(), fmt.Sprintf("more than %d bytes", max), max)
	}
	return data, nil
}

func tooLarge(what, path, size string, max int64) error {
	fix := ""
	if what == "state file" {
		fix = fmt.Sprintf("swarm never writes a state file this large; move it away (mv %s %s.big)", path, path)
	}
	return refuse(what, path, fmt.Sprintf("is too large (%s; at most %d)", size, max), fix)
}

// NewLock returns a file lock on path in the state root whose file is
// opened as OpenFile opens one (no symbolic link followed, no FIFO waited
// on), created 0600 when create is set. Take it with TryLock, which also
// refuses a lock file OpenFile would refuse.
func NewLock(path string, create bool) *flock.Flock {
	flag := os.O_RDONLY | openFlags
	if create {
		flag |= os.O_CREATE
	}
	return flock.New(path, flock.SetFlag(flag), flock.SetPermissions(filePerm))
}

// TryLock tries to take fl every retry until ctx ends; ok is false when
// ctx ended first. A lock file that is not a regular file of the user's
// (unless TrustSharedRoot) is an error, and the lock is let go again.
func TryLock(ctx context.Context, fl *flock.Flock, retry time.Duration) (ok bool, err error) {
	ok, err = fl.TryLockContext(ctx, retry)
	if err != nil && ctx.Err() == nil {
		return false, openError("state file", fl.Path(), err)
	}
	if !ok {
		return false, nil
	}
	fi, err := fl.Stat()
	if err == nil {
		err = checkRegular("state file", fl.Path(), fi, !TrustSharedRoot())
	}
	if err != nil {
		return false, errors.Join(err, fl.Unlock())
	}
	return true, nil
}

// WriteFile replaces the content of a file in the state root in place (not
// atomically: for files whose identity matters, such as a lock holder's
// pid), through OpenFile.
func WriteFile(path string, data []byte) error {
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, filePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// CheckRoot refuses a state root that another user owns or that group or
// others can write, unless the user opted in (TrustSharedRoot): anyone who
// can write it can plant a worker's command, a loop's hook or a symbolic
// link that swarm would follow. A root that does not exist yet passes:
// swarm creates it 0700. A symlinked root is judged by the directory it
// points to. Commands call it before anything else touches the root.
func CheckRoot(root string) error { return checkDirs(root, root) }

// MakeDir creates dir, a directory in the state root, and its missing
// parents (0700), after and again once made checking every directory from
// root down to it (checkDirs): a root that is refused gets nothing created
// in it, and one swapped meanwhile is caught.
func MakeDir(root, dir string) error {
	if err := checkDirs(root, dir); err != nil {
		return err
	}
	if err := makeDir(dir); err != nil {
		return err
	}
	return checkDirs(root, dir)
}

// checkDirs checks the state root and each directory from it down to dir
// that exists: not a symbolic link (the root itself may be one: a
// symlinked SWARM_HOME is used as it is), a directory, and, unless
// TrustSharedRoot, owned by the user and not writable by group or others.
func checkDirs(root, dir string) error {
	trust := TrustSharedRoot()
	for i, d := range dirChain(root, dir) {
		stat, what := os.Lstat, "state directory"
		if i == 0 {
			stat, what = os.Stat, "state root"
		}
		fi, err := stat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkDir(what, d, fi, trust); err != nil {
			return err
		}
	}
	return nil
}

// checkDir refuses fi, the state directory at d, when it is not a plain
// directory or, unless trust, not the user's alone.
func checkDir(what, d string, fi fs.FileInfo, trust bool) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return refuse(what, d, "is a symbolic link",
			"swarm never follows a symbolic link inside its state root; replace it with the directory it points to")
	}
	if !fi.IsDir() {
		return refuse(what, d, fmt.Sprintf("is not a directory (%s)", typeName(fi.Mode())),
			"move it away; swarm creates the directory")
	}
	if trust {
		return nil
	}
	if problem := untrusted(fi); problem != "" {
		return refuse(what, d, problem, dirFix(d, fi))
	}
	return nil
}

// dirFix is the hint for a state directory another user owns or can write.
func dirFix(d string, fi fs.FileInfo) string {
	optIn := fmt.Sprintf("or set %s=1 if everyone who can write it is trusted to run commands as you", TrustSharedRootEnv)
	if uid, ok := owner(fi); ok && int(uid) != os.Geteuid() {
		return "use a SWARM_HOME of your own, " + optIn
	}
	return fmt.Sprintf("chmod 700 %s, use another SWARM_HOME, %s", d, optIn)
}
