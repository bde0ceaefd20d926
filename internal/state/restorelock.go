package state

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// restoreLockWait bounds the wait for another swarm restore of the same
// root (a login's unit and a user's command at once): restoring takes
// seconds per worker.
const restoreLockWait = 5 * time.Minute

// LockRestore takes the state root's restore lock (restore.lock), waiting
// for another restore to finish, and returns its release. Restores one
// after the other never bring a worker back twice: the second finds it
// running.
func (s *Store) LockRestore() (release func(), err error) {
	if err := MakeDir(s.Root, s.Root); err != nil {
		return nil, err
	}
	fl := NewLock(filepath.Join(s.Root, "restore.lock"), true)
	ctx, cancel := context.WithTimeout(context.Background(), restoreLockWait)
	defer cancel()
	ok, err := TryLock(ctx, fl, 50*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("another swarm restore of this state root did not finish within " + restoreLockWait.String())
	}
	return func() { _ = fl.Unlock() }, nil // unlocking an open file does not fail; exit frees it anyway
}
