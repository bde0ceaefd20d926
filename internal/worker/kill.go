package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worktree"
)

// KillOptions control what kill removes besides the running command.
type KillOptions struct {
	RmWorktree bool
	ForceDirty bool
}

// Kill stops a worker: SIGTERM to every process group of its command, SIGKILL
// after the grace period, then the tmux window is removed. The record stays,
// marked stopped. A ralph loop is stopped for good (through Hooks).
func (m *Manager) Kill(name string, o KillOptions) error {
	w, err := m.settled(name)
	if err != nil {
		return err
	}
	if m.Hooks != nil {
		if err := m.Hooks.BeforeKill(w); err != nil {
			return err
		}
	}
	was, err := m.stop(w)
	if err != nil {
		return err
	}
	// A worker that ran until now stopped now: with its start, how long
	// it ran (one stopped already keeps what is known of its end).
	if was.Running() {
		err = m.SetMetadata(name, map[string]any{StoppedAtKey: state.PythonLocal(time.Now())}, state.StatusStopped)
	} else {
		err = m.SetStatus(name, state.StatusStopped)
	}
	if err != nil {
		return err
	}
	if m.Hooks != nil {
		m.Hooks.AfterKill(w)
	}
	if o.RmWorktree && w.Worktree != nil {
		_ = m.removeWorktree(w, o.ForceDirty) // warned: the worker is stopped all the same
	}
	return nil
}

// stop ends the worker's processes and window, whatever state they are
// in, and returns the worker as it was before. A worker whose recorded
// tmux server cannot be reached is an error: it may be running where no
// client can be sent.
func (m *Manager) stop(w *state.Worker) (Live, error) {
	if w.Tmux != nil {
		if err := Server(w).Check(); err != nil {
			return Live{}, hint.Wrap(&unreachableError{fmt.Errorf("cannot stop '%s': %w", w.Name, err)},
				"its record is damaged; stop the agent by hand, then swarm clean %s", w.Name)
		}
	}
	live, err := m.Refresh([]state.Worker{*w})
	if err != nil {
		return Live{}, err
	}
	l := live[0]
	switch {
	case w.Tmux != nil:
		if l.WindowID == "" {
			return l, nil
		}
		tc := m.tmux(w)
		// Only a live pane's own process: a dead pane's pid is a reaped
		// process's, which may be anyone's by now.
		if t, ok := PaneTarget(tc, l.WindowID); ok {
			proc.TerminateTarget(t, m.KillGrace)
		}
		if err := tc.KillWindow(l.WindowID); err != nil {
			return l, fmt.Errorf("cannot remove tmux window of '%s': %w", w.Name, err)
		}
	case w.PID != nil:
		// Only the worker's own process (its pid may have been reused,
		// which its start time tells); children that outlived it are
		// still in its process group.
		if t, ok := processTarget(w); ok {
			proc.TerminateTarget(t, m.KillGrace)
		} else {
			proc.TerminateTargets(proc.OrphansOf(*w.PID), m.KillGrace)
		}
	}
	return l, nil
}

// PaneTarget identifies the process of a pane that is alive: its pid and
// start time read now, and the pane polled again to confirm it is still
// alive with that pid (tmux reaps a pane's process before it reports the
// pane dead, so a live pane's pid is its own process).
func PaneTarget(tc Poller, id string) (proc.Target, bool) {
	ps, _, err := tc.Poll(id)
	if err != nil || ps.Dead || ps.PID <= 1 {
		return proc.Target{}, false
	}
	t, ok := proc.Identify(ps.PID)
	if !ok {
		return proc.Target{}, false
	}
	again, _, err := tc.Poll(id)
	if err != nil || again.Dead || again.PID != ps.PID {
		return proc.Target{}, false
	}
	return t, true
}

// removeWorktree removes a worker's worktree, keeping it (with a warning)
// when it holds work and force is not set. It returns why it kept the
// worktree (a *worktree.DirtyError: what work), nil once it is gone.
func (m *Manager) removeWorktree(w *state.Worker, force bool) error {
	if err := worktree.Remove(WorktreeOf(w), force); err != nil {
		m.warn(fmt.Sprintf("cannot remove worktree for '%s': %v", w.Name, err))
		return err
	}
	return nil
}

// KeptWorktree is a worktree clean kept, and why (a *worktree.DirtyError
// when it holds work).
type KeptWorktree struct {
	*state.WorktreeInfo
	Why error
}

// WorktreeOf is the worker's worktree as the worktree package sees it.
func WorktreeOf(w *state.Worker) worktree.Info {
	return worktree.Info{Path: w.Worktree.Path, Branch: w.Worktree.Branch, BaseRepo: w.Worktree.BaseRepo}
}

// KillAll kills every worker that is running now. Each kill updates only
// its own record under the lock, so workers spawned meanwhile are kept.
func (m *Manager) KillAll(o KillOptions) ([]string, error) {
	live, err := m.List()
	if err != nil {
		return nil, err
	}
	var killed []string
	for _, l := range live {
		if !l.Running() && !m.loopActive(l.Name) {
			continue
		}
		if err := m.Kill(l.Name, o); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			// A damaged record is set aside, as ls sets it aside: the
			// others are killed all the same.
			var bad *unreachableError
			if errors.As(err, &bad) {
				m.warn(fmt.Sprintf("%v; %s", err, hint.Of(err)))
				continue
			}
			return killed, err
		}
		killed = append(killed, l.Name)
	}
	return killed, nil
}

// unreachableError is a worker whose record names a tmux server no
// client may connect to (tmux.Server.Check).
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// loopActive reports whether the worker has a ralph loop that has not
// ended (it may be between iterations, or its monitor may be dead).
func (m *Manager) loopActive(name string) bool {
	return m.Hooks != nil && m.Hooks.LoopActive(name)
}

// CleanOptions control clean.
type CleanOptions struct {
	RmWorktree bool
	ForceDirty bool
}

// Clean removes a stopped worker's record, logs and (clean) worktree.
// A worktree holding work is kept and returned. A worker whose ralph loop has
// started and not ended is refused like a running one.
func (m *Manager) Clean(name string, o CleanOptions) (kept *KeptWorktree, err error) {
	if _, err := m.settled(name); err != nil {
		return nil, err
	}
	l, err := m.Status(name)
	if err != nil {
		return nil, err
	}
	if l.Running() {
		return nil, errCleanRunning(name)
	}
	// A loop between iterations has no running agent, but it holds the
	// worker all the same: its monitor starts the next one.
	if m.Hooks != nil {
		if status := m.Hooks.LoopHolds(name); status != "" {
			return nil, errCleanLoop(name, status)
		}
	}
	if l.WindowID != "" {
		// The window kept after its command exited (remain-on-exit).
		if err := m.tmux(&l.Worker).KillWindow(l.WindowID); err != nil {
			return nil, fmt.Errorf("cannot remove tmux window of '%s': %w", name, err)
		}
	}
	// The record goes before the worktree and logs: a loop resumed since
	// the check above keeps its record, and with it its worktree.
	if err := m.removeEnded(name); err != nil {
		return nil, err
	}
	if o.RmWorktree && l.Worktree != nil {
		if why := m.removeWorktree(&l.Worker, o.ForceDirty); why != nil {
			kept = &KeptWorktree{WorktreeInfo: l.Worktree, Why: why}
		}
	}
	m.removeFiles(name)
	if m.Hooks != nil {
		m.Hooks.AfterClean(name)
	}
	return kept, nil
}

// removeFiles removes a cleaned worker's logs and exit records; one that
// cannot be removed is warned of: the worker is gone all the same.
func (m *Manager) removeFiles(name string) {
	var errs []error
	for _, p := range []string{m.stdoutLog(name), m.stderrLog(name)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, m.Store.RemoveProcessExit(name), m.Store.RemoveWindowExit(name))
	for _, err := range errs {
		if err != nil {
			m.warn(fmt.Sprintf("cleaned '%s', but %v", name, err))
		}
	}
}

// removeEnded removes the worker's record unless its loop has been
// resumed or started meanwhile (see Hooks.RemoveUnlessLoopHolds).
func (m *Manager) removeEnded(name string) error {
	remove := func() error { return m.Remove(name) }
	if m.Hooks == nil {
		return remove()
	}
	err := m.Hooks.RemoveUnlessLoopHolds(name, remove)
	var held *LoopHoldsError
	if errors.As(err, &held) {
		return errCleanLoop(name, held.Status)
	}
	return err
}

// errCleanRunning refuses to clean a running worker.
func errCleanRunning(name string) error {
	return hint.Errorf(cleanHint(name), "cannot clean running worker '%s'", name)
}

// errCleanLoop refuses to clean a worker its loop holds: the worker of a
// loop that goes on by itself (running, or waiting out a usage limit) is
// a running worker, whether or not an agent runs this moment.
func errCleanLoop(name, status string) error {
	if state.RalphStatus(status) != state.RalphPaused {
		return errCleanRunning(name)
	}
	return hint.Errorf(cleanHint(name), "cannot clean worker '%s': its ralph loop is %s", name, status)
}

func cleanHint(name string) string {
	return fmt.Sprintf("swarm kill %s, then swarm clean %s", name, name)
}

// CleanAll cleans every stopped worker; running ones are left alone.
func (m *Manager) CleanAll(o CleanOptions) (cleaned []string, kept map[string]*KeptWorktree, err error) {
	live, err := m.List()
	if err != nil {
		return nil, nil, err
	}
	kept = map[string]*KeptWorktree{}
	for _, l := range live {
		if l.Running() || (m.Hooks != nil && m.Hooks.LoopHolds(l.Name) != "") {
			continue
		}
		k, err := m.Clean(l.Name, o)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			// It may have been respawned meanwhile: leave it.
			continue
		}
		if k != nil {
			kept[l.Name] = k
		}
		cleaned = append(cleaned, l.Name)
	}
	return cleaned, kept, nil
}

// RespawnOptions control respawn.
type RespawnOptions struct {
	CleanFirst bool
	ForceDirty bool
}

// Respawn restarts a worker with the same command, env, tags, directory,
// session, socket and worktree. The record is updated in place, so a
// failed restart never loses it.
func (m *Manager) Respawn(name string, o RespawnOptions) (*SpawnResult, error) {
	// Claimed first (respawn.go): two respawns at once would each start
	// a window, and only the last would be recorded.
	w, release, err := m.claimRespawn(name)
	if err != nil {
		return nil, err
	}
	defer release()
	if w.IsRalph() {
		return nil, fmt.Errorf("worker '%s' runs a ralph loop (use: swarm ralph resume %s, or swarm ralph spawn --replace)", name, name)
	}
	// Before anything is stopped: a refused respawn changes nothing.
	if err := checkWorkDirsOf(w); err != nil {
		return nil, err
	}
	if _, err := m.stop(w); err != nil {
		return nil, err
	}
	opts := respawnOptions(w)
	if w.Worktree != nil {
		if o.CleanFirst {
			if err := worktree.Remove(WorktreeOf(w), o.ForceDirty); err != nil {
				var dirty *worktree.DirtyError
				if errors.As(err, &dirty) {
					return nil, fmt.Errorf("cannot remove worktree for '%s': %w (use --force-dirty to discard it)", name, err)
				}
				return nil, fmt.Errorf("cannot remove worktree for '%s': %w", name, err)
			}
		}
	}
	return m.Spawn(opts)
}

// respawnOptions starts the worker of record w again as it was: the same
// command, env, tags, directory, session, socket and worktree, updating
// the record in place.
func respawnOptions(w *state.Worker) SpawnOptions {
	opts := SpawnOptions{
		Name: w.Name, Command: w.Cmd, Tmux: w.Tmux != nil, Tags: w.Tags, Env: EnvList(w.Env),
		Cwd: w.Cwd, Metadata: w.Metadata, Replace: true,
	}
	if w.Tmux != nil {
		// The same server, by the path recorded (a record without one
		// finds its server as it did, and records the path now).
		srv := Server(w)
		opts.Session, opts.Socket, opts.SocketPath = w.Tmux.Session, srv.Name, srv.Path
	}
	if w.Worktree != nil {
		opts.Worktree = true
		opts.Cwd = w.Worktree.BaseRepo
		opts.Branch = w.Worktree.Branch
		opts.WorktreeDir = filepath.Dir(w.Worktree.Path)
	}
	return opts
}
