package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tmux windows lock is one per state root: a second taker (another
// store of the root: another process's) waits until the first lets go,
// or gives up after its wait; a symbolic link in its place is refused.
func TestWindowsLockIsExclusivePerRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	release, err := NewStore(root, nil).LockWindows(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := NewStore(root, nil).LockWindows(50 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "held the tmux windows lock") {
		t.Fatalf("a second taker while held: %v", err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("the second taker gave up after %v, before its wait", took)
	}
	if other, err := NewStore(t.TempDir(), nil).LockWindows(50 * time.Millisecond); err != nil {
		t.Fatalf("another root's lock: %v", err)
	} else {
		other()
	}

	got := make(chan error, 1)
	go func() {
		again, err := NewStore(root, nil).LockWindows(5 * time.Second)
		if err == nil {
			again()
		}
		got <- err
	}()
	// The waiter may be waiting or not started yet: either way it has
	// the lock once it is let go (the exclusion itself is shown above).
	release()
	if err := <-got; err != nil {
		t.Fatalf("a waiter after the release: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "windows.lock")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi, err)
	}

	hostile := t.TempDir()
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), filepath.Join(hostile, "windows.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore(hostile, nil).LockWindows(50 * time.Millisecond); err == nil {
		t.Error("a symbolic link was taken as the lock")
	}
}
