// Package restore brings back what a reboot or a killed tmux server took
// (swarm restore): tmux workers whose window is gone while their record
// says running, re-spawned with their recorded command, env, directory
// and worktree (worker.Manager.Restore); ralph loops whose monitor is
// gone while they run, resumed at their iteration by a new monitor
// (ralph.ResumeLoop). A restore holds the state root's restore lock and
// looks again at each one under its own claim, so nothing is restored
// twice; a record whose worktree or directory is gone is reported, never
// guessed at.
package restore

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// sigtermPause is the pause reason a monitor writes when it is sent
// SIGTERM (ralph's RequestPause): a shutdown stops monitors so. A loop
// paused so, whose monitor is gone, was running and is lost; one the user
// paused is not.
const sigtermPause = "monitor received SIGTERM"

// Kinds of what is restored.
const (
	KindWorker = "worker"
	KindLoop   = "loop"
)

// Result is what a restore did with one worker or loop.
type Result struct {
	Name, Kind string
	// Done says what was done ("" when nothing was); Err why it was not
	// restored; Notes what the user should know.
	Done  string
	Err   error
	Notes []string
}

// LoopLost reports whether the loop of worker name was lost: it runs (or
// waits out a limit, or was paused by a stop of its monitor) and no
// monitor holds its lock.
func LoopLost(m *worker.Manager, name string) bool {
	rs := m.Store.Ralph(name)
	if !rs.Exists() {
		return false
	}
	st, err := rs.Load()
	if err != nil {
		return false
	}
	return loopLost(rs, st)
}

// loopLost: a loop made with --no-run and never run has no monitor
// because none was ever started, and is left as it is: restored, it would
// start running.
func loopLost(rs *state.RalphStore, st *state.Ralph) bool {
	running := st.Runs() || (st.Status == state.RalphPaused && string(st.PauseReason) == sigtermPause)
	return running && !ralph.NotStarted(st) && !ralph.MonitorAlive(rs)
}

// Mark sets Lost on the live workers whose loop was lost (a tmux worker's
// own is set by worker.Manager.Refresh), and NotStarted on those whose
// loop was made with --no-run and never run.
func Mark(m *worker.Manager, live []worker.Live) {
	for i := range live {
		if !live[i].IsRalph() {
			continue
		}
		rs := m.Store.Ralph(live[i].Name)
		if !rs.Exists() {
			continue
		}
		st, err := rs.Load()
		if err != nil {
			continue
		}
		if loopLost(rs, st) {
			live[i].Lost = true
		} else if ralph.NotStarted(st) && !ralph.MonitorAlive(rs) {
			live[i].NotStarted = true
		}
	}
}

// Run restores the lost workers and loops: those named, or with all every
// one. A name that is not lost gets a Result without Done or Err.
func Run(m *worker.Manager, names []string, all bool) ([]Result, error) {
	return run(m, names, all, false)
}

// DryRun says what Run would do, doing nothing (no lock taken, nothing
// started or written): Done says what would be done ("would restore
// ..."), Err why something would not be restored.
func DryRun(m *worker.Manager, names []string, all bool) ([]Result, error) {
	return run(m, names, all, true)
}

func run(m *worker.Manager, names []string, all, dry bool) ([]Result, error) {
	if !dry {
		release, err := m.Store.LockRestore()
		if err != nil {
			return nil, err
		}
		defer release()
	}
	list := m.List
	if dry {
		// Not even a crashed spawn's rollback, which List does first.
		list = m.ListAsIs
	}
	live, err := list()
	if err != nil {
		return nil, err
	}
	Mark(m, live)
	for _, n := range names {
		if _, err := m.Get(n); err != nil {
			return nil, err
		}
	}
	var out []Result
	for _, l := range live {
		named := slices.Contains(names, l.Name)
		if !named && (!all || !l.Lost) {
			continue
		}
		out = append(out, one(m, &l, dry))
	}
	return out, nil
}

// one restores one worker or loop, after looking again at whether it is
// lost; with dry it says what it would do.
func one(m *worker.Manager, l *worker.Live, dry bool) Result {
	if l.IsRalph() {
		return loop(m, l.Name, dry)
	}
	r := Result{Name: l.Name, Kind: KindWorker}
	if dry {
		if !l.Lost {
			return r
		}
		if r.Err = worker.CheckRestorable(&l.Worker); r.Err == nil {
			r.Done = "would restore " + l.Name
			if w := l.Worker; w.Tmux != nil {
				r.Done = fmt.Sprintf("would restore %s (tmux: %s:%s)", w.Name, w.Tmux.Session, w.Tmux.Window)
			}
		}
		return r
	}
	res, err := m.Restore(l.Name)
	switch {
	case errors.Is(err, worker.ErrNotLost):
	case err != nil:
		r.Err = err
	default:
		r.Done = "restored"
		if w := res.Worker; w.Tmux != nil {
			r.Done = fmt.Sprintf("restored %s (tmux: %s:%s)", w.Name, w.Tmux.Session, w.Tmux.Window)
		}
	}
	return r
}

// loop resumes a lost loop: a new monitor continues it at its iteration
// (an iteration whose agent went with its window ends as it left it, and
// the next starts with a fresh agent).
func loop(m *worker.Manager, name string, dry bool) Result {
	r := Result{Name: name, Kind: KindLoop}
	rs := m.Store.Ralph(name)
	st, err := rs.Load()
	if err != nil {
		r.Err = err
		return r
	}
	if !loopLost(rs, st) {
		if ralph.NotStarted(st) && !ralph.MonitorAlive(rs) {
			r.Notes = append(r.Notes, fmt.Sprintf("loop %s has not started (spawned with --no-run): start it with: swarm ralph run %s", name, name))
		}
		return r
	}
	if _, err := os.Stat(st.WorkDir); err != nil {
		r.Err = fmt.Errorf("its directory %s is gone (swarm ralph spawn --replace starts the loop again)", st.WorkDir)
		return r
	}
	if dry {
		r.Done = fmt.Sprintf("would resume loop %s at iteration %d", name, st.CurrentIteration)
		if st.SameSession {
			r.Notes = append(r.Notes, fmt.Sprintf("loop %s used --same-session: it would go on with a fresh agent (no agent session id is recorded to resume)", name))
		}
		return r
	}
	if err := ralph.ResumeLoop(m, name); err != nil {
		var w *ralph.ErrWarning
		if !errors.As(err, &w) {
			r.Err = err
		}
		return r
	}
	r.Done = fmt.Sprintf("resumed loop %s at iteration %d", name, st.CurrentIteration)
	if st.SameSession {
		r.Notes = append(r.Notes, fmt.Sprintf("loop %s used --same-session: it goes on with a fresh agent (no agent session id is recorded to resume)", name))
	}
	return r
}
