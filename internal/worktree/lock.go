package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
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
	l := flock.New(filepath.Join(dir, repoLockName))
	ctx, cancel := context.WithTimeout(context.Background(), repoLockWait)
	defer cancel()
	ok, err := l.TryLockContext(ctx, repoLockPoll)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && !ok):
		return nil, fmt.Errorf("another worktree change in %s did not finish within %s (lock %s)", repo, repoLockWait, l.Path())
	case err != nil:
		return nil, fmt.Errorf("cannot lock %s: %w", l.Path(), err)
	}
	return func() { l.Unlock() }, nil
}
