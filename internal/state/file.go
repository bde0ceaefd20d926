package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// LockTimeout bounds how long a command waits for another swarm process to
// release a state lock. Critical sections are short (a read and a write), so
// hitting this means a process is stuck, not busy.
var LockTimeout = 30 * time.Second

// withLock runs fn while holding an exclusive flock on lockPath.
func withLock(lockPath string, fn func() error) error {
	if err := ensureDir(filepath.Dir(lockPath)); err != nil {
		return err
	}
	fl := flock.New(lockPath, flock.SetPermissions(filePerm))
	ctx, cancel := context.WithTimeout(context.Background(), LockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("cannot lock %s: %w", lockPath, err)
	}
	if !ok {
		return fmt.Errorf("cannot lock %s: another swarm process has held it for %s", lockPath, LockTimeout)
	}
	defer fl.Unlock()
	return fn()
}

// WriteFileAtomic writes data to path so that readers see either the old or
// the new content, never a mix: unique temp file in the same directory,
// fsync, rename, fsync of the directory.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := ensureDir(dir); err != nil {
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
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(filePerm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// backupCorrupt moves a corrupt file aside to path+".corrupted" so a human
// can look at it, and the caller can start afresh.
func backupCorrupt(path string) error {
	return os.Rename(path, path+".corrupted")
}
