package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// startingWait bounds how long kill and clean wait for a worker that is
// being spawned to be spawned (or rolled back): a spawn takes well under
// a second, but a --worktree checkout or a tmux server under load can
// take longer.
const startingWait = 60 * time.Second

// rollBackCrashed undoes what spawns that were killed half way left (their
// records are "starting", their spawning process gone): it stops the
// window or process they started, removes a worktree they created (when
// clean), and removes the record, or for a respawn marks it stopped. It
// reports whether live is out of date now: a record was rolled back, or
// was found, on a fresh read, no longer to be a crashed spawn (its spawn
// finished after live was taken). A record whose roll back could not be
// written is warned about and left as it is.
func (m *Manager) rollBackCrashed(live []Live) bool {
	stale := false
	for _, l := range live {
		if !l.Crashed {
			continue
		}
		if _, err := m.rollBack(l.Name); err != nil {
			m.warn(err.Error())
		} else {
			stale = true
		}
	}
	return stale
}

// rollBack undoes one crashed spawn, after confirming on a fresh read that
// it is still "starting" with its spawner gone (the look that found it may
// be older than a spawn that finished since). It reports whether it
// changed the record (removed it, or marked a respawn stopped), and the
// error of a write that failed.
func (m *Manager) rollBack(name string) (bool, error) {
	w, err := m.Get(name)
	if err != nil || w.Status != state.StatusStarting || spawnerAlive(w) {
		return false, nil
	}
	m.undoStarted(w)
	rolled := false
	err = m.Store.Update(func(r *state.Registry) error {
		cur := r.Find(name)
		if cur == nil || cur.Status != state.StatusStarting || spawnerAlive(cur) {
			return nil
		}
		rolled = true
		if replacing, _ := cur.Metadata[replacingKey].(bool); replacing {
			cur.Status = state.StatusStopped
			for _, k := range spawnKeys {
				delete(cur.Metadata, k)
			}
			return nil
		}
		r.Remove(name)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("cannot roll back the interrupted spawn of '%s': %w", name, err)
	}
	if rolled {
		m.warn(fmt.Sprintf("rolled back the interrupted spawn of '%s'", name))
	}
	return rolled, nil
}

// undoStarted stops what a crashed spawn started and removes a worktree it
// created (a dirty one is kept). What the spawn recorded (a window id, a
// pid, a worktree) is found by the record; what it made but died before
// recording, by the token and worktree plan it recorded first.
func (m *Manager) undoStarted(w *state.Worker) {
	token, _ := w.Metadata[spawnTokenKey].(string)
	if w.Tmux != nil {
		m.undoWindows(w, token)
	}
	if t, ok := processTarget(w); ok {
		proc.TerminateTarget(t, m.KillGrace)
	} else if w.Tmux == nil && token != "" {
		proc.TerminateTargets(proc.WithEnv(SpawnTokenEnv, token), m.KillGrace)
	}
	if info, ok := madeWorktree(w); ok {
		if err := worktree.Undo(info); err != nil {
			m.warn(fmt.Sprintf("kept the worktree of the interrupted spawn of '%s': %v", w.Name, err))
		}
	}
}

// undoWindows stops and removes the crashed spawn's window: any carrying
// its token, whether or not it lived to record the window's id (an id
// alone may be another server's window by now: windowIs). A spawn of an
// older swarm, without a token, by the id it recorded (and the names).
func (m *Manager) undoWindows(w *state.Worker, token string) {
	tc := m.tmux(w)
	panes, _ := tc.ListPanes()
	windows := tmux.Windows(panes)
	var ids []string
	for _, win := range windows {
		if token != "" && win.Tag == token {
			ids = append(ids, win.WindowID)
		}
	}
	if id, _ := w.Metadata[WindowIDKey].(string); token == "" && id != "" {
		if win, ok := WindowOf(windows, w); ok {
			ids = append(ids, win.WindowID)
		}
	}
	for _, id := range ids {
		if t, ok := PaneTarget(tc, id); ok {
			proc.TerminateTarget(t, m.KillGrace)
		}
		if err := tc.KillWindow(id); err != nil {
			m.warn(fmt.Sprintf("cannot remove the window of the interrupted spawn of '%s': %v", w.Name, err))
		}
	}
}

// madeWorktree is the worktree a crashed spawn created: as recorded once
// made, else as planned when the spawn died before recording it (git may
// have made it, or be making it: Undo looks under the repository lock,
// which that git holds until it exits). Its branch is the spawn's to
// delete only if the spawn recorded making it (branchMadeKey, the commit
// it was made at).
func madeWorktree(w *state.Worker) (worktree.Info, bool) {
	commit, _ := w.Metadata[branchMadeKey].(string)
	if made, _ := w.Metadata[worktreeMadeKey].(bool); made && w.Worktree != nil {
		info := WorktreeOf(w)
		info.NewBranch, info.BranchCommit = commit != "", commit
		return info, true
	}
	plan, ok := w.Metadata[worktreePlanKey].(map[string]any)
	if !ok || w.Worktree != nil {
		return worktree.Info{}, false
	}
	path, _ := plan["path"].(string)
	branch, _ := plan["branch"].(string)
	base, _ := plan["base_repo"].(string)
	pathExisted, _ := plan["path_existed"].(bool)
	if path == "" || base == "" || pathExisted {
		return worktree.Info{}, false
	}
	return worktree.Info{Path: path, Branch: branch, BaseRepo: base, NewBranch: commit != "", BranchCommit: commit}, true
}

// settled returns a worker's record once it is not being spawned: kill
// and clean of a worker being spawned wait for the spawn to finish (or a
// crashed one to be rolled back) rather than race it.
func (m *Manager) settled(name string) (*state.Worker, error) {
	var w *state.Worker
	var err error
	settled := clock.Wait(context.Background(), clock.Real, PollInterval(spawnPoll), startingWait, func() bool {
		for {
			w, err = m.Get(name)
			if err != nil || w.Status != state.StatusStarting {
				return true
			}
			if spawnerAlive(w) {
				return false
			}
			// The spawner died: roll its spawn back, and look again at
			// once (a rolled-back record is gone or no longer starting).
			rolled, rerr := m.rollBack(name)
			if rerr != nil {
				w, err = nil, rerr
				return true
			}
			if !rolled {
				return false
			}
		}
	})
	if !settled {
		return nil, errors.New("worker '" + name + "' is still being spawned; try again")
	}
	return w, err
}

// spawnPoll paces the wait for a worker being spawned.
const spawnPoll = 20 * time.Millisecond
