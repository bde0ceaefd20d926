// Package daemon runs swarm's background processes (ralph loop monitors,
// heartbeats): this very binary started detached, with liveness answered by
// a lock it holds, never by a stored pid alone.
//
// A daemon holds an exclusive flock on its lock file for its whole life.
// The kernel releases the lock when the process dies, however it dies, so
// "is it alive" is a probe of the lock (Alive), and "exactly one" is the
// lock itself: a second process cannot take it. While it holds the lock the
// daemon keeps its pid in the lock file, so a starter can tell its own child
// from an older holder, and status commands can name the pid.
//
// The lock file is only ever written in place (truncate and write), never
// replaced by a rename: a new inode would be a new, unheld lock.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// Timings.
const (
	// lockRetry is how long Lock keeps trying: a liveness probe (Alive)
	// holds the lock for an instant, and must not turn a starting daemon
	// away.
	lockRetry = 2 * time.Second
	// lockRetryDelay is the pause between tries; probes last microseconds.
	lockRetryDelay = 20 * time.Millisecond
	// waitPoll is how often WaitExit and Start look at the lock: short
	// enough that callers do not notice, cheap (one open and flock).
	waitPoll = 20 * time.Millisecond
	// DefaultStartTimeout bounds how long Start waits for the child to
	// take its lock: starting a Go binary and reading a small state file
	// takes milliseconds; seconds means a loaded machine, more means it
	// is stuck.
	DefaultStartTimeout = 10 * time.Second
	// killWait bounds the wait for a child killed by Start to be gone: a
	// process in uninterruptible sleep dies only when its I/O ends.
	killWait = 5 * time.Second
)

// Permissions, as the rest of the state root (docs/state.md).
const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// maxPIDFile bounds the read of a lock file: it holds a pid and a newline.
const maxPIDFile = 64

// ErrHeld is returned by Lock when another process holds the lock.
var ErrHeld = errors.New("another process holds the lock")

// Held is a lock taken by Lock. Release it (or exit) to end liveness.
type Held struct {
	fl   *flock.Flock
	path string
}

// Lock takes the exclusive lock at lockPath for this process and writes
// this process's pid into it. It retries briefly, so that a liveness probe
// holding the lock for an instant does not turn the caller away; a lock
// held by a live process gives ErrHeld.
func Lock(lockPath string) (*Held, error) {
	if err := os.MkdirAll(filepath.Dir(lockPath), dirPerm); err != nil {
		return nil, err
	}
	// Opened as every file of the state root is: never through a
	// symbolic link, only a regular file of the user's (state.NewLock).
	fl := state.NewLock(lockPath, true)
	ctx, cancel := context.WithTimeout(context.Background(), lockRetry)
	defer cancel()
	ok, err := state.TryLock(ctx, fl, lockRetryDelay)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrHeld
	}
	// In place, never by rename (see the package comment).
	if err := state.WriteFile(lockPath, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return nil, errors.Join(err, fl.Unlock())
	}
	return &Held{fl: fl, path: lockPath}, nil
}

// Release clears the pid and releases the lock. The pid is cleared first:
// once the lock is free a successor may write its own.
func (h *Held) Release() error {
	if h == nil || h.fl == nil {
		return nil
	}
	_ = state.WriteFile(h.path, nil) // best effort: a pid left behind is read only while a process holds the lock (Holder)
	err := h.fl.Unlock()
	h.fl = nil
	return err
}

// Alive reports whether a process holds the lock at lockPath. It never
// creates the lock file.
func Alive(lockPath string) bool {
	if _, err := os.Stat(lockPath); err != nil {
		return false
	}
	fl := state.NewLock(lockPath, false)
	ok, err := fl.TryLock()
	if err != nil {
		// Cannot probe (permissions, a vanished directory): report not
		// alive rather than block a command forever on it.
		return false
	}
	if ok {
		_ = fl.Unlock() // the probe's own lock: the answer stands (unlocking an open file does not fail)
		return false
	}
	return true
}

// Holder returns the pid written by the process holding the lock, or 0 when
// no process holds it or the pid is not written yet.
func Holder(lockPath string) int {
	if !Alive(lockPath) {
		return 0
	}
	return lockPID(lockPath)
}

// HolderTarget returns the identity (pid and start time) of the process
// holding the lock at lockPath. A caller that must know when that process
// is gone, after it has let go of the lock, needs more than its pid: once
// it is reaped, the number may be handed to an unrelated process. The lock
// is looked at again after the start time is read, so the identity is
// the holder's, never a stranger's that got the pid in between. ok is
// false when no process holds the lock, its pid is not written yet, or it
// let go meanwhile.
func HolderTarget(lockPath string) (proc.Target, bool) {
	pid := Holder(lockPath)
	if pid <= 0 {
		return proc.Target{}, false
	}
	t, ok := proc.Identify(pid)
	if !ok || Holder(lockPath) != pid {
		return proc.Target{}, false
	}
	return t, true
}

func lockPID(lockPath string) int {
	data, err := state.ReadFile(lockPath, maxPIDFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// WaitExit waits until no process holds the lock, at most timeout, and
// reports whether the lock is free.
func WaitExit(lockPath string, timeout time.Duration) bool {
	return clock.Wait(context.Background(), clock.Real, waitPoll, timeout, func() bool { return !Alive(lockPath) })
}

// IsDaemon reports whether this process was started by Start with the
// given marker.
func IsDaemon(marker string) bool { return marker != "" && os.Getenv(marker) == "1" }

// withoutKeys drops KEY=... entries of env for the given keys.
func withoutKeys(env []string, keys []string) []string {
	var out []string
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		drop := false
		for _, key := range keys {
			if k == key {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}

// ExitedError is returned by Start when the child exits before it holds
// its lock. Some daemons end at once by design (a loop already complete);
// the caller decides whether that is a failure.
type ExitedError struct {
	What    string
	LogPath string
}

func (e *ExitedError) Error() string {
	return fmt.Sprintf("the %s exited at start (see %s)", e.What, e.LogPath)
}
