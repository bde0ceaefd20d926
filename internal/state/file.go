package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LockTimeout bounds how long a command waits for another swarm process to
// release a state lock. Critical sections are short (a read and a write), so
// hitting this means a process is stuck, not busy.
var LockTimeout = 30 * time.Second

// lockRetry is how often a waiting command tries the lock again.
const lockRetry = 10 * time.Millisecond

// staleTempAge is how old a temp file of WriteFileAtomic must be before the
// next locked write of the same file removes it as the leftover of a writer
// killed between creating and renaming it. Every writer of a state file
// holds the file's lock while its temp file exists, so a sweep under that
// lock cannot meet a live one; the age guards against writers that do not
// take the lock (an older swarm, a script) and against clock skew on a
// network file system. A live temp file lives for one write and fsync,
// milliseconds; a minute is far beyond that and still clears a crash's
// leftovers at the next write after it.
const staleTempAge = time.Minute

// maxBackups bounds the search for a free name for a corrupt file's backup.
// A thousand backups of one file means something keeps corrupting it, and
// a human has to look before more disk goes to copies.
const maxBackups = 1000

// withLock runs fn while holding an exclusive flock on lockPath, waiting
// at most LockTimeout for it.
func withLock(lockPath string, fn func() error) error {
	return withLockFor(lockPath, LockTimeout, fn)
}

// withLockFor is withLock with its own timeout, for a lock whose holders
// do more than a read and a write.
func withLockFor(lockPath string, timeout time.Duration, fn func() error) error {
	if err := makeDir(filepath.Dir(lockPath)); err != nil {
		return err
	}
	fl := NewLock(lockPath, true)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ok, err := TryLock(ctx, fl, lockRetry)
	if errors.Is(err, ErrUnsafe) {
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot lock %s: %w", lockPath, err)
	}
	if !ok {
		return fmt.Errorf("cannot lock %s: another swarm process has held it for %s", lockPath, timeout)
	}
	// Closing the descriptor releases the lock even if Unlock fails, so
	// its error tells nothing the caller could act on.
	defer func() { _ = fl.Unlock() }() // nothing to act on (above)
	return fn()
}

// FailWrites makes every state write fail with err until the returned
// function is called: for tests of how callers behave on a full disk.
// Not for production use.
func FailWrites(err error) (restore func()) {
	orig := writeAll
	writeAll = func(*os.File, []byte) error { return err }
	return func() { writeAll = orig }
}

// writeAll writes data to f and flushes it to the disk. It is a variable so
// tests can simulate a full disk (ENOSPC) without mounting a small file
// system, which needs privileges CI does not have.
var writeAll = func(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// WriteFileAtomic writes data to path, mode 0600, so that readers see either
// the old or the new content, never a mix: unique temp file in the same
// directory, fsync, rename, fsync of the directory. On error the old file is
// untouched and the temp file removed. A missing parent directory is created
// 0700; an existing one keeps its mode (callers write project files such as
// PROMPT.md with it, in the user's directories).
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicPerm(path, data, filePerm)
}

// WriteFileAtomicPerm is WriteFileAtomic writing the file with mode perm,
// for project files others should read (PROMPT.md, AGENTS.md). The mode
// is set on the temp file, before the rename: a chmod of the path after it
// would follow a symbolic link put there meanwhile.
func WriteFileAtomicPerm(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := makeDir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()     // the write failed: its error is the one returned
			_ = os.Remove(name) // a temp file left is swept by a later write (sweepStaleTemps)
		}
	}()
	// fchmod on our own descriptor: no path, so no symlink to follow. It
	// undoes a umask that would leave the owner without read access.
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := writeAll(tmp, data); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. Failing here is not an error: the
// new content is already in place for every reader, and some file systems
// refuse to fsync a directory; only a power cut at this instant could still
// bring back the old file.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()  // not an error (above): the new content is in place for every reader
		_ = d.Close() // read only: nothing to lose
	}
}

// sweepStaleTemps removes the temp files WriteFileAtomic left for path when
// its writer died, once they are older than staleTempAge. Call it with
// path's lock held. A temp file that cannot be removed is left for the
// next sweep: the write it follows has succeeded and must not fail for it.
func sweepStaleTemps(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range entries {
		if !isTempOf(e.Name(), base) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTempAge {
			_ = os.Remove(filepath.Join(dir, e.Name())) // left for the next sweep (above)
		}
	}
}

// isTempOf reports whether name is a temp file os.CreateTemp made for base
// in WriteFileAtomic: "." + base + "." + digits + ".tmp".
func isTempOf(name, base string) bool {
	mid, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, ".tmp")
	if !ok || mid == "" {
		return false
	}
	_, err := strconv.ParseUint(mid, 10, 64)
	return err == nil
}

// keepCorrupt makes sure a backup of data, the content of the corrupt file
// at path, exists under one of path+".corrupted", path+".corrupted.1", ...
// so a human can look at it, and returns its name. A backup that already
// holds the same content is enough (listing a corrupt state twice must not
// make two copies); otherwise data goes to the first free name. The first
// backup has swarm.py's name, and a backup is never overwritten.
//
// Readers that take no lock may run this at the same time, so the name is
// taken atomically with the whole content already behind it: data is
// written to a temp file and hard-linked under the name, which fails if the
// name exists (and never follows a symlink planted there). A reader that
// loses the race finds the winner's complete copy, sees it is the same
// content and uses it. On a file system without hard links the name is
// taken with O_EXCL instead (no symlink followed either), where a racing
// reader may find the copy half written and make a second one.
func keepCorrupt(path string, data []byte) (string, error) {
	tmp := ""
	defer func() {
		if tmp != "" {
			_ = os.Remove(tmp) // a temp file left is swept by a later write (sweepStaleTemps)
		}
	}()
	for i := 0; i < maxBackups; i++ {
		name := path + ".corrupted"
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		if taken, same := backupHolds(name, data); same {
			return name, nil
		} else if taken {
			continue
		}
		if tmp == "" {
			var err error
			if tmp, err = tempCopy(path, data); err != nil {
				return "", fmt.Errorf("cannot back up %s: %w", path, err)
			}
		}
		err := os.Link(tmp, name)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			err = createExcl(name, data)
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("cannot back up %s: %w", path, err)
			}
		}
		if err == nil {
			return name, nil
		}
		// Taken meanwhile, by a reader backing up this same content or
		// by something else: look again.
		if _, same := backupHolds(name, data); same {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s has %d backups already (%s.corrupted*); remove some", path, maxBackups, filepath.Base(path))
}

// backupHolds reports whether something is at name (taken) and whether it
// is a regular file with content data (same). A symlink or anything else
// that is not a regular file takes the name and is never the backup.
func backupHolds(name string, data []byte) (taken, same bool) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return true, false
	}
	old, err := ReadFile(name, int64(len(data)))
	return true, err == nil && bytes.Equal(old, data)
}

// tempCopy writes data, flushed to the disk, to a new temp file next to
// path, named as WriteFileAtomic names its own (so the sweep of stale temp
// files also clears one a killed process left), and returns its name.
func tempCopy(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", err
	}
	err = errors.Join(f.Chmod(filePerm), writeAll(f, data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name()) // a temp file left is swept by a later write (sweepStaleTemps)
		return "", err
	}
	return f.Name(), nil
}

// createExcl writes data to a new file name; it fails with fs.ErrExist if
// anything, a symlink included, is there already. A failed write removes
// the file again.
func createExcl(name string, data []byte) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	if err := errors.Join(writeAll(f, data), f.Close()); err != nil {
		return errors.Join(err, os.Remove(name))
	}
	return nil
}

// appendLines appends lines to the file at path (created 0600) in one
// write with O_APPEND, flushed to the disk before it returns, so lines from
// concurrent writers never interleave and a caller can rely on them. With
// undo, a failed write is cut off again, so a full disk leaves no half line;
// only a caller holding the file's lock may ask for that, since the cut
// would also remove lines appended meanwhile by others.
func appendLines(path string, undo bool, lines ...[]byte) error {
	f, err := OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, filePerm)
	if err != nil {
		return err
	}
	var size int64
	if undo {
		if size, err = f.Seek(0, io.SeekEnd); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	err = writeAll(f, bytes.Join(lines, nil))
	if err != nil && undo {
		err = errors.Join(err, f.Truncate(size))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// readIfExists returns the content of path, or nil if there is no file:
// read through ReadFile, so bounded by MaxFileSize, never through a
// symbolic link and never from a FIFO or a device.
func readIfExists(path string) ([]byte, bool, error) {
	data, err := ReadFile(path, MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}
