package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
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
// clean), and removes the record, or for a respawn marks it stopped.
func (m *Manager) rollBackCrashed(live []Live) bool {
	any := false
	for _, l := range live {
		if l.Crashed && m.rollBack(l.Name) {
			any = true
		}
	}
	return any
}

// rollBack undoes one crashed spawn, after confirming on a fresh read that
// it is still "starting" with its spawner gone (the look that found it may
// be older than a spawn that finished since). It reports whether it
// rolled anything back.
func (m *Manager) rollBack(name string) bool {
	w, err := m.Get(name)
	if err != nil || w.Status != state.StatusStarting || spawnerAlive(w) {
		return false
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
			for _, k := range []string{SpawnerKey, replacingKey, worktreeMadeKey, branchMadeKey} {
				delete(cur.Metadata, k)
			}
			return nil
		}
		r.Remove(name)
		return nil
	})
	switch {
	case err != nil:
		m.warn(fmt.Sprintf("cannot roll back the interrupted spawn of '%s': %v", name, err))
	case rolled:
		m.warn(fmt.Sprintf("rolled back the interrupted spawn of '%s'", name))
	}
	return true
}

// undoStarted stops what a crashed spawn started and removes a worktree it
// created (a dirty one is kept).
func (m *Manager) undoStarted(w *state.Worker) {
	if w.Tmux != nil {
		if id, _ := w.Metadata[WindowIDKey].(string); id != "" {
			tc := m.tmux(w)
			if t, ok := PaneTarget(tc, id); ok {
				proc.TerminateTarget(t, m.KillGrace)
			}
			tc.KillWindow(id)
		}
	}
	if t, ok := processTarget(w); ok {
		proc.TerminateTarget(t, m.KillGrace)
	}
	if made, _ := w.Metadata[worktreeMadeKey].(bool); made && w.Worktree != nil {
		info := WorktreeOf(w)
		info.NewBranch, _ = w.Metadata[branchMadeKey].(bool)
		if err := worktree.Undo(info); err != nil {
			m.warn(fmt.Sprintf("kept the worktree of the interrupted spawn of '%s': %v", w.Name, err))
		}
	}
}

// settled returns a worker's record once it is not being spawned: kill
// and clean of a worker being spawned wait for the spawn to finish (or a
// crashed one to be rolled back) rather than race it.
func (m *Manager) settled(name string) (*state.Worker, error) {
	deadline := time.Now().Add(startingWait)
	for {
		w, err := m.Get(name)
		if err != nil || w.Status != state.StatusStarting {
			return w, err
		}
		if !spawnerAlive(w) {
			m.rollBack(name)
			continue
		}
		if time.Now().After(deadline) {
			return nil, errors.New("worker '" + name + "' is still being spawned; try again")
		}
		time.Sleep(PollInterval(spawnPoll))
	}
}

// spawnPoll paces the wait for a worker being spawned.
const spawnPoll = 20 * time.Millisecond
