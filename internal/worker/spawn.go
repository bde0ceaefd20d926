package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// SpawnOptions describes a worker to start.
type SpawnOptions struct {
	Name    string
	Command []string
	// Tmux runs the worker in a tmux window; otherwise it is a detached
	// process with its output in logs/.
	Tmux    bool
	Session string // default: the state root's session
	Socket  string
	// Worktree runs the worker in its own git worktree on branch Branch
	// (default: the name), under WorktreeDir (default: <repo>-worktrees).
	Worktree    bool
	Branch      string
	WorktreeDir string
	Tags        []string
	Env         []string // KEY=VAL
	Cwd         string   // default: the current directory
	// ReadyWait waits up to ReadyTimeout for the agent to look ready.
	ReadyWait    bool
	ReadyTimeout time.Duration
	Metadata     map[string]any
	// Replace updates an existing record in place (respawn) instead of
	// refusing; the record survives if the restart fails.
	Replace bool
	// NoStart creates the record (and worktree) but starts nothing: the
	// ralph monitor creates the window when its first iteration starts.
	NoStart bool
}

// SpawnResult is a started worker.
type SpawnResult struct {
	Worker *state.Worker
	// NotReady is set when ReadyWait timed out (the worker still runs).
	NotReady bool
}

// ParseEnv turns KEY=VAL arguments into a map; the value may contain '='
// and spaces.
func ParseEnv(env []string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return nil, fmt.Errorf("invalid env format '%s' (expected KEY=VAL)", e)
		}
		out[k] = v
	}
	return out, nil
}

// EnvList renders an env map as sorted KEY=VAL entries.
func EnvList(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sortStrings(out)
	return out
}

// undo collects rollback steps, run in reverse if spawn fails.
type undo []func()

func (u *undo) add(f func()) { *u = append(*u, f) }
func (u undo) run() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}

// Spawn starts a worker. Everything is validated before anything is
// created, and every step is rolled back if a later one fails: no half
// record, no orphan window or worktree.
func (m *Manager) Spawn(o SpawnOptions) (res *SpawnResult, err error) {
	if err := state.ValidateName(o.Name); err != nil {
		return nil, err
	}
	if len(o.Command) == 0 {
		return nil, errors.New("no command provided (use -- command...)")
	}
	env, err := ParseEnv(o.Env)
	if err != nil {
		return nil, err
	}
	cwd := o.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("directory not found: %s (check --cwd)", cwd)
	}
	session := o.Session
	if session == "" {
		session = m.Session
	}
	if o.Tmux && (strings.ContainsAny(session, ":.") || session == "") {
		return nil, fmt.Errorf("invalid session name '%s' (no ':' or '.')", session)
	}
	var repoRoot string
	if o.Worktree {
		var warns []string
		repoRoot, warns, err = worktree.RepoRoot(cwd)
		for _, w := range warns {
			m.warn(w)
		}
		if err != nil {
			return nil, errors.New("not in a git repository (required for --worktree)")
		}
	}

	var rollback undo
	defer func() {
		if err != nil {
			rollback.run()
		}
	}()

	// Reserve the name first, so two spawns of one name cannot both
	// create a worktree or a window.
	var previous *state.Worker
	rec := state.Worker{
		Name: o.Name, Status: state.StatusRunning, Cmd: o.Command, Started: state.Now(),
		Cwd: cwd, Env: env, Tags: o.Tags, Metadata: o.Metadata,
	}
	err = m.Store.Update(func(r *state.Registry) error {
		if old := r.Find(o.Name); old != nil {
			if !o.Replace {
				return fmt.Errorf("worker '%s' already exists", o.Name)
			}
			cp := *old
			previous = &cp
			*old = rec
			return nil
		}
		r.Workers = append(r.Workers, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rollback.add(func() {
		m.Store.Update(func(r *state.Registry) error {
			if previous != nil {
				if w := r.Find(o.Name); w != nil {
					prev := *previous
					prev.Status = state.StatusStopped
					*w = prev
				}
				return nil
			}
			r.Remove(o.Name)
			return nil
		})
	})

	dir := cwd
	if o.Worktree {
		parent := o.WorktreeDir
		path := worktree.DefaultPath(repoRoot, o.Name)
		if parent != "" {
			if parent, err = filepath.Abs(parent); err != nil {
				return nil, err
			}
			path = filepath.Join(parent, o.Name)
		}
		branch := o.Branch
		if branch == "" {
			branch = o.Name
		}
		_, existed := os.Stat(path)
		info, werr := worktree.Create(repoRoot, path, branch)
		if werr != nil {
			return nil, fmt.Errorf("failed to create worktree: %v", werr)
		}
		if existed != nil { // we made it: undo removes it (it is clean), and its new branch
			rollback.add(func() { worktree.Undo(info) })
		}
		rec.Worktree = &state.WorktreeInfo{Path: info.Path, Branch: info.Branch, BaseRepo: info.BaseRepo}
		dir = info.Path
		rec.Cwd = dir
	}

	if o.Tmux {
		rec.Tmux = &state.TmuxInfo{Session: session, Window: o.Name, Socket: state.NullString(o.Socket)}
	}
	if err = checkCommand(o.Command[0], dir, env); err != nil {
		switch {
		case o.NoStart:
			return nil, err
		case o.Tmux:
			return nil, fmt.Errorf("failed to create tmux window: %v", err)
		default:
			return nil, fmt.Errorf("failed to spawn process: %v", err)
		}
	}
	if !o.NoStart {
		if o.Tmux {
			tc := tmux.New(o.Socket)
			id, terr := tc.NewWindow(tmux.WindowSpec{
				Session: session, Name: o.Name, Dir: dir,
				Env: windowEnv(env), Command: o.Command,
			})
			if terr != nil {
				return nil, fmt.Errorf("failed to create tmux window: %v", terr)
			}
			rollback.add(func() { tc.KillWindow(id) })
		} else {
			pid, perr := proc.Start(proc.StartSpec{
				Command: o.Command, Dir: dir, Env: append(os.Environ(), EnvList(env)...),
				Stdout: m.stdoutLog(o.Name), Stderr: m.stderrLog(o.Name),
			})
			if perr != nil {
				return nil, fmt.Errorf("failed to spawn process: %v", perr)
			}
			rollback.add(func() { proc.Terminate(pid, time.Second) })
			rec.PID = &pid
		}
	}
	if o.NoStart {
		rec.Status = state.StatusStopped
	}
	err = m.Store.Update(func(r *state.Registry) error {
		w := r.Find(o.Name)
		if w == nil {
			return fmt.Errorf("worker '%s' was removed while it was being spawned", o.Name)
		}
		*w = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	res = &SpawnResult{Worker: &rec}
	if o.ReadyWait && !o.NoStart {
		ok, werr := m.WaitReady(&rec, o.ReadyTimeout)
		if werr != nil {
			return res, nil
		}
		res.NotReady = !ok
	}
	return res, nil
}

// windowEnv adds the caller's PATH to a tmux window's environment unless
// the user set one: the tmux server may have been started long ago from a
// different shell, and the agent should be found as the caller finds it.
func windowEnv(env map[string]string) []string {
	list := EnvList(env)
	if _, ok := env["PATH"]; !ok {
		if p := os.Getenv("PATH"); p != "" {
			list = append(list, "PATH="+p)
		}
	}
	return list
}

// checkCommand reports a command that cannot run, before a window is made
// for it: an agent that is not installed should be an error now, not a
// window that closes at once.
func checkCommand(name, dir string, env map[string]string) error {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("command not found: %s", name)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("command is not executable: %s", name)
		}
		return nil
	}
	path := os.Getenv("PATH")
	if p, ok := env["PATH"]; ok {
		path = p
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("command not found: %s (is it installed and on PATH?)", name)
}

func (m *Manager) stdoutLog(name string) string {
	return filepath.Join(m.Store.LogsDir(), name+".stdout.log")
}
func (m *Manager) stderrLog(name string) string {
	return filepath.Join(m.Store.LogsDir(), name+".stderr.log")
}

// WaitReady polls the worker's screen (or, for a process worker, the end
// of its stdout log) until it looks ready or timeout passes.
func (m *Manager) WaitReady(w *state.Worker, timeout time.Duration) (bool, error) {
	interval := PollInterval(500 * time.Millisecond)
	if interval > 500*time.Millisecond {
		interval = 500 * time.Millisecond
	}
	var screen ready.Screen
	if w.Tmux != nil {
		tc := Tmux(w)
		win, ok, err := tc.Lookup(w.Tmux.Session, w.Tmux.Window)
		if err != nil || !ok {
			return false, err
		}
		// One tmux process per poll: the window id does not change.
		screen = func() (string, bool, error) {
			st, s, err := tc.Poll(win.WindowID)
			if err != nil {
				return "", true, nil
			}
			return s, st.Dead, nil
		}
	} else {
		screen = func() (string, bool, error) {
			s, _ := tailFile(m.stdoutLog(w.Name), 40)
			return s, w.PID == nil || !proc.Alive(*w.PID), nil
		}
	}
	res, err := ready.Wait(context.Background(), screen, interval, timeout, func(kind string) {
		m.warn(fmt.Sprintf("agent '%s' is showing a %s; it needs a human (swarm attach %s)", w.Name, kind, w.Name))
	})
	return res.Ready, err
}
