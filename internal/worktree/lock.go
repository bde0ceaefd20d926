package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"golang.org/x/sys/unix"
)

// Timings of the repository lock.
const (
	// repoLockWait bounds the wait for another swarm's worktree change in
	// the same repository: a worktree add checks out every file, which
	// takes seconds in a large repository, and spawns queue behind it.
	repoLockWait = 2 * time.Minute
	// repoLockPoll paces the attempts to take it.
	repoLockPoll = 10 * time.Millisecond
)

// repoLockName is the lock file, in the repository's common git directory.
const repoLockName = "swarm-worktree.lock"

// held are the repository locks this process holds now. Every git command
// inherits them (git passes them on to its own children), so a lock stays
// held until the git that a swarm started under it has exited, even when
// that swarm is SIGKILLed first: git goes on (until its output pipe
// breaks) and may still be creating a branch or a worktree, and the
// command that rolls the crashed spawn back must not look before it is
// done. Starting a git and closing a lock take mu, so a child never gets a
// descriptor being closed.
var held struct {
	mu    sync.Mutex
	files []*os.File
}

// lockRepo serializes swarm's worktree changes (add, remove, prune) in one
// repository. git fails a worktree command that runs while another is
// half done: "fatal: failed to read .git/worktrees/X/commondir" came from
// two spawns with --worktree at once. The lock file lives in the
// repository's common git directory, so every swarm on the machine, of
// whatever SWARM_HOME, takes the same one. It returns the unlock.
func lockRepo(repo string) (func(), error) {
	out, err := git(repo, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	dir := strings.TrimSpace(out)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repo, dir)
	}
	path := filepath.Join(dir, repoLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	var lockErr error
	locked := clock.Wait(context.Background(), clock.Real, repoLockPoll, repoLockWait, func() bool {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != nil && !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			lockErr = err
			return true
		}
		return err == nil
	})
	switch {
	case lockErr != nil:
		_ = f.Close() // a lock file: nothing was written to it
		return nil, fmt.Errorf("cannot lock %s: %w", path, lockErr)
	case !locked:
		_ = f.Close() // a lock file: nothing was written to it
		return nil, fmt.Errorf("another worktree change in %s did not finish within %s (lock %s)", repo, repoLockWait, path)
	}
	held.mu.Lock()
	held.files = append(held.files, f)
	held.mu.Unlock()
	return func() {
		held.mu.Lock()
		defer held.mu.Unlock()
		held.files = slices.DeleteFunc(held.files, func(g *os.File) bool { return g == f })
		_ = f.Close() // releases the lock once no git child holds it either; nothing was written to it
	}, nil
}
