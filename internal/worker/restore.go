package worker

import (
	"errors"
	"fmt"
	"os"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
)

// ErrNotLost is Restore's answer for a worker that was not lost (it runs,
// or it ended by itself or was stopped): there is nothing to bring back.
var ErrNotLost = errors.New("not lost")

// Restore starts a lost tmux worker again (Live.Lost: its window went
// with its tmux server, at a reboot say) with its recorded command, env,
// directory, session, socket and worktree, as respawn does. It claims the
// worker as respawn does and looks again under the claim, so two restores
// never both start it: the second gets ErrNotLost. A worker whose
// worktree or directory is gone is not restored: a new one would not be
// its work; nor one whose directory another user may have made
// (CheckWorkDir).
func (m *Manager) Restore(name string) (*SpawnResult, error) {
	w, release, err := m.claimRespawn(name)
	if err != nil {
		return nil, err
	}
	defer release()
	live, err := m.Refresh([]state.Worker{*w})
	if err != nil {
		return nil, err
	}
	if !live[0].Lost {
		return nil, ErrNotLost
	}
	if err := checkRestorable(w); err != nil {
		return nil, err
	}
	if err := checkWorkDirsOf(w); err != nil {
		return nil, err
	}
	return m.Spawn(respawnOptions(w))
}

// CheckRestorable says why Restore would not restore w (its worktree or
// directory is gone), nil if it would: swarm restore --dry-run.
func CheckRestorable(w *state.Worker) error { return checkRestorable(w) }

// checkRestorable refuses a worker whose worktree or directory is gone.
func checkRestorable(w *state.Worker) error {
	if w.Worktree != nil {
		if _, err := os.Stat(w.Worktree.Path); err != nil {
			return hint.Errorf(fmt.Sprintf("swarm respawn %s makes a new worktree on branch %s, or swarm clean %s", w.Name, w.Worktree.Branch, w.Name),
				"its worktree %s is gone", w.Worktree.Path)
		}
		return nil
	}
	if fi, err := os.Stat(w.Cwd); err != nil || !fi.IsDir() {
		return hint.Errorf(fmt.Sprintf("swarm clean %s", w.Name), "its directory %s is gone", w.Cwd)
	}
	return nil
}
