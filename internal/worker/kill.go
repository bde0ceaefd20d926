package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
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
	return m.kill(name, o, killAllRun{})
}

// killAllRun is what a kill of KillAll's shares with the others: stopped
// is called once the worker is stopped and its record written, before the
// wait for its loop's monitor (KillAll frees its slot there); windows
// gathers the window kills, refresh the looks at the windows. Zero for
// Kill.
type killAllRun struct {
	stopped func()
	windows *windowKiller
	refresh *refresher
}

// kill is Kill, as one of KillAll's kills when run says so.
func (m *Manager) kill(name string, o KillOptions, run killAllRun) error {
	w, err := m.settled(name)
	if err != nil {
		return err
	}
	if m.Hooks != nil {
		if err := m.Hooks.BeforeKill(w); err != nil {
			return err
		}
	}
	was, err := m.stop(w, run)
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
	if run.stopped != nil {
		run.stopped()
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
// client can be sent. run, when set, gathers its looks at the window and
// the window's kill with those of the other kills under way (KillAll).
func (m *Manager) stop(w *state.Worker, run killAllRun) (Live, error) {
	if w.Tmux != nil {
		if err := Server(w).Check(); err != nil {
			return Live{}, hint.Wrap(&unreachableError{fmt.Errorf("cannot stop '%s': %w", w.Name, err)},
				"its record is damaged; stop the agent by hand, then swarm clean %s", w.Name)
		}
	}
	var l Live
	if run.refresh != nil {
		var err error
		if l, err = run.refresh.refresh(w); err != nil {
			return Live{}, err
		}
	} else {
		live, err := m.Refresh([]state.Worker{*w})
		if err != nil {
			return Live{}, err
		}
		l = live[0]
	}
	switch {
	case w.Tmux != nil:
		if l.WindowID == "" {
			return l, nil
		}
		tc := m.tmux(w)
		// Only a live pane's own process: a dead pane's pid is a reaped
		// process's, which may be anyone's by now.
		var t proc.Target
		ok, done := false, false
		if run.refresh != nil {
			t, ok, done = run.refresh.paneTarget(w, l)
		}
		if !done {
			t, ok = PaneTarget(tc, l.WindowID)
		}
		if ok {
			proc.TerminateTarget(t, m.KillGrace)
		}
		kill := tc.KillWindow
		if run.windows != nil {
			kill = func(id string) error { return run.windows.kill(Server(w), tc, id) }
		}
		if err := kill(l.WindowID); err != nil {
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
//
// The kills run concurrently, at most killAllAtOnce at a time up to the
// point where a loop's kill waits for its monitor to see it at its next
// poll (up to 2 s) and exit: those waits, which cost a look every 25 ms,
// overlap without bound. One after another, 60 loops took a minute.
// Each kill is Kill, with its guarantees (the loop marked killed before
// its agent is stopped, its monitor gone when it returns); the state
// files are locked per kill, as by concurrent swarm processes; the looks
// at the windows of the kills under way go together in one tmux listing
// (refresher), and their windows' kills in one tmux call under one hold
// of the windows lock (windowKiller). After an error no further kill
// starts and the ones under way finish; the names of those killed come
// back in the order of the listing, with the first error in that order
// (any other is a warning).
func (m *Manager) KillAll(o KillOptions) ([]string, error) {
	live, err := m.List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range live {
		if l.Running() || m.loopActive(l.Name) {
			names = append(names, l.Name)
		}
	}
	// The kills' warnings (this manager's, its store's, its hooks') come
	// from several goroutines: one at a time to the caller's.
	defer m.serializeWarnings()()
	errs := make([]error, len(names))
	ran := make([]bool, len(names))
	var failed atomic.Bool
	var wg sync.WaitGroup
	slots := make(chan struct{}, killAllAtOnce)
	windows, refresh := newWindowKiller(), newRefresher(m)
	for i, name := range names {
		slots <- struct{}{}
		if failed.Load() {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var free sync.Once
			release := func() { free.Do(func() { <-slots }) }
			// Freed at the latest once a failure is known: no kill
			// starts after it.
			defer release()
			err := m.kill(name, o, killAllRun{stopped: release, windows: windows, refresh: refresh})
			var bad *unreachableError
			switch {
			case err == nil, errors.Is(err, ErrNotFound):
			case errors.As(err, &bad):
				// A damaged record is set aside, as ls sets it aside:
				// the others are killed all the same.
				m.warn(fmt.Sprintf("%v; %s", err, hint.Of(err)))
			default:
				failed.Store(true)
			}
			errs[i], ran[i] = err, true
		}()
	}
	wg.Wait()
	var killed []string
	var first error
	for i, name := range names {
		var bad *unreachableError
		switch err := errs[i]; {
		case !ran[i], errors.Is(err, ErrNotFound), errors.As(err, &bad):
		case err == nil:
			killed = append(killed, name)
		case first == nil:
			first = err
		default:
			// Another kill under way failed too: said, not dropped.
			msg := err.Error()
			if h := hint.Of(err); h != "" {
				msg += "; " + h
			}
			m.warn(msg)
		}
	}
	return killed, first
}

// killAllAtOnce bounds KillAll's kills under way until their wait for a
// monitor: a few tmux calls each, state updates that take their locks in
// turn, and the wait for the agent's processes to exit.
const killAllAtOnce = 16

// serializeWarnings makes the manager's and its store's warnings go to
// their receivers one at a time, until the returned function puts them
// back: for goroutines that share the manager.
func (m *Manager) serializeWarnings() (restore func()) {
	var mu sync.Mutex
	one := func(to func(string)) func(string) {
		if to == nil {
			return nil
		}
		return func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			to(msg)
		}
	}
	warn, storeWarn := m.Warn, m.Store.Warn
	m.Warn, m.Store.Warn = one(warn), one(storeWarn)
	return func() { m.Warn, m.Store.Warn = warn, storeWarn }
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
	if _, err := m.stop(w, killAllRun{}); err != nil {
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
