package state

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// windowsLockRetry is how often a waiting LockWindows tries again: the
// lock is held for one tmux call, a few milliseconds on a server that
// answers.
const windowsLockRetry = 2 * time.Millisecond

// LockWindows takes the state root's tmux windows lock (windows.lock),
// waiting at most wait, and returns its release. swarm holds it around
// the end of a window and a loop monitor's attach of its tmux control
// client, which tmux 3.3a cannot take at once (tmux.Client.Exclusive).
// Every swarm process of the root takes the same lock, whatever the tmux
// server.
func (s *Store) LockWindows(wait time.Duration) (release func(), err error) {
	if err := MakeDir(s.Root, s.Root); err != nil {
		return nil, err
	}
	fl := NewLock(filepath.Join(s.Root, "windows.lock"), true)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := TryLock(ctx, fl, windowsLockRetry)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("another swarm process held the tmux windows lock for " + wait.String())
	}
	return func() { _ = fl.Unlock() }, nil // unlocking an open file does not fail; exit frees it anyway
}
