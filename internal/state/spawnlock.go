package state

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gofrs/flock"
)

// ErrSpawnBusy is TryLockSpawn's answer when another command holds the
// loop's spawn lock.
var ErrSpawnBusy = errors.New("another spawn of the loop holds its lock")

// SpawnLockPath is ralph/N.spawn.lock. It lives beside the loop's
// directory, not in it: a replace removes the directory, and a lock file
// removed and made again while held would be a second, unheld lock.
func (r *RalphStore) SpawnLockPath() string { return r.Dir + ".spawn.lock" }

// TryLockSpawn takes the loop's spawn lock, without waiting, and returns
// its release. ralph spawn holds it from replacing an old loop of the name
// to the new loop's monitor being up, so two spawns of one name never
// interleave (one would remove what the other just made). A lock another
// command holds gives ErrSpawnBusy: a spawn of the name is under way, and
// waiting for it would only replace what it made. The kernel releases the
// lock when its holder dies, however it dies.
func (r *RalphStore) TryLockSpawn() (release func(), err error) {
	if r.err != nil {
		return nil, r.err
	}
	path := r.SpawnLockPath()
	if err := makeDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	fl := flock.New(path, flock.SetPermissions(filePerm))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	if !ok {
		return nil, ErrSpawnBusy
	}
	return func() { _ = fl.Unlock() }, nil // unlocking an open file does not fail; exit frees it anyway
}
