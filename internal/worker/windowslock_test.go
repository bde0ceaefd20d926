package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/tmux"
)

// A manager's tmux clients hold the state root's windows lock around a
// window's end (tmux.Client.Exclusive is HoldWindows), which is the lock
// every other swarm process of the root takes; a holder that keeps it
// past windowsLockWait is waited for no longer: the kill goes on.
func TestManagerClientsHoldTheRootsWindowsLock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var warnings []string
	m := New(root, func(s string) { warnings = append(warnings, s) })
	c, ok := m.TmuxFor(tmux.Server{Name: "s"}).(*tmux.Client)
	if !ok || c.Exclusive == nil {
		t.Fatalf("TmuxFor gives %T without Exclusive", m.TmuxFor(tmux.Server{Name: "s"}))
	}

	release := c.Exclusive()
	if _, err := New(root, nil).Store.LockWindows(50 * time.Millisecond); err == nil {
		t.Fatal("another process could take the lock while a client held it")
	}
	release()
	again, err := New(root, nil).Store.LockWindows(50 * time.Millisecond)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}

	// Held elsewhere for good: HoldWindows gives up after its wait, and
	// says so once.
	start := time.Now()
	m.HoldWindows()()
	if took := time.Since(start); took < windowsLockWait || took > windowsLockWait+5*time.Second {
		t.Errorf("HoldWindows returned after %v with the lock held elsewhere; want about %v", took, windowsLockWait)
	}
	again()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "going on without the tmux windows lock") {
		t.Errorf("warnings %q", warnings)
	}

	// A lock file swarm refuses (a symbolic link): the same, at once.
	hostile := t.TempDir()
	if err := os.Symlink(filepath.Join(t.TempDir(), "x"), filepath.Join(hostile, "windows.lock")); err != nil {
		t.Fatal(err)
	}
	warnings = nil
	h := New(hostile, func(s string) { warnings = append(warnings, s) })
	h.HoldWindows()()
	h.HoldWindows()()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "windows.lock") {
		t.Errorf("a refused lock file: warnings %q", warnings)
	}
}
