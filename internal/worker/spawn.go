package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worktree"
)

// DefaultReadyTimeout is how long spawn --ready-wait, and a ralph loop
// before typing its prompt, wait for the agent to look ready (swarm.py's
// --ready-timeout 120): long enough for a cold start of an agent CLI that
// loads plugins and checks for updates.
const DefaultReadyTimeout = 120 * time.Second

// SpawnOptions describes a worker to start.
type SpawnOptions struct {
	Name    string
	Command []string
	// Tmux runs the worker in a tmux window; otherwise it is a detached
	// process with its output in logs/.
	Tmux    bool
	Session string // default: the state root's session
	// Socket is the tmux -L socket name ("": the server tmux picks,
	// $TMUX's inside tmux, else the default one). SocketPath, when set,
	// is the server's socket path (respawn: the server recorded).
	Socket     string
	SocketPath string
	// Worktree runs the worker in its own git worktree on branch Branch
	// (default: the name), under WorktreeDir (default: <repo>-worktrees).
	Worktree    bool
	Branch      string
	WorktreeDir string
	Tags        []string
	Env         []string // KEY=VAL
	Cwd         string   // default: the current directory
	// ReadyWait waits up to ReadyTimeout (DefaultReadyTimeout) for the
	// agent to look ready;
	// ReadyPatterns (--ready-pattern) are more screens that count as
	// ready, and ReadyProgress, when set, hears what is waited for and,
	// every ReadyProgressEvery, how long it has been.
	ReadyWait     bool
	ReadyTimeout  time.Duration
	ReadyPatterns []*regexp.Regexp
	ReadyProgress func(msg string)
	Metadata      map[string]any
	// Replace updates an existing record in place (respawn) instead of
	// refusing; the record survives if the restart fails.
	Replace bool
	// NoStart creates the record (and worktree) but starts nothing: the
	// ralph monitor creates the window when its first iteration starts.
	NoStart bool
	// MaxLogSize caps a process worker's stdout and stderr logs (0: the
	// default, logcap.DefaultMax).
	MaxLogSize int64
	// FreshBranch moves an existing worktree branch to HEAD (or Base;
	// when that loses no work) instead of continuing on it.
	FreshBranch bool
	// Base is the branch, tag or commit a new worktree branch starts
	// from ("": the repository's HEAD); NewBranch refuses to reuse an
	// existing branch. WorktreeSetup is a shell command run in the
	// worktree before the command starts (its failure fails the spawn).
	Base          string
	NewBranch     bool
	WorktreeSetup string
}

// SpawnResult is a started worker.
type SpawnResult struct {
	Worker *state.Worker
	// NotReady is set when ReadyWait timed out (the worker still runs),
	// Exited when the agent exited before it looked ready, with its
	// ExitCode when that is known (HasExit).
	NotReady bool
	Exited   bool
	ExitCode int
	HasExit  bool
	// Notes say what spawn did that the user may not expect (it reused
	// an existing branch, at which commit).
	Notes []string
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

// MaxTagLen bounds a tag, in characters: tags are labels shown in a
// column of ls and swarm top.
const MaxTagLen = 64

// CheckTags refuses a tag that could not be shown as it is: empty, longer
// than MaxTagLen, or holding a character that is not printable (a control
// character, a tab or newline, an escape sequence, an invisible format
// character). ls, top and the board print tags, and such a tag would
// drive the terminal or forge a row. The tag is quoted in the error, so
// the message itself shows it harmlessly.
func CheckTags(tags []string) error {
	for _, t := range tags {
		if t == "" || utf8.RuneCountInString(t) > MaxTagLen || termtext.Line(t) != t {
			return hint.Errorf(fmt.Sprintf("a tag is printable text of at most %d characters (no control characters, tabs or newlines)", MaxTagLen),
				"invalid tag %q", t)
		}
	}
	return nil
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

// undo collects rollback steps, run in reverse if spawn fails. Every
// step runs, and run returns what each could not undo.
type undo []func() error

func (u *undo) add(f func() error) { *u = append(*u, f) }
func (u undo) run() error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		errs = append(errs, u[i]())
	}
	return errors.Join(errs...)
}

// spawnPlan is a validated spawn: everything resolved before anything is
// created.
type spawnPlan struct {
	note     string // what makeWorktree found (an existing branch)
	notes    []string
	o        SpawnOptions
	env      map[string]string
	cwd      string // absolute, exists
	session  string
	server   tmux.Server // the tmux window's server, with its socket path
	token    string      // spawnTokenKey
	worktree *worktreePlan
}

// worktreePlan is the worktree a spawn will create or reuse, recorded
// before it is made (worktreePlanKey). Whether the spawn makes the branch
// is recorded later, when it is about to (branchMadeKey): only then, under
// the repository lock, is that known for sure.
type worktreePlan struct {
	Path        string `json:"path"`
	Branch      string `json:"branch"`
	BaseRepo    string `json:"base_repo"`
	PathExisted bool   `json:"path_existed"`
}

// Spawn starts a worker. Everything is validated before anything is
// created, and every step is rolled back if a later one fails: no half
// record, no orphan window or worktree.
func (m *Manager) Spawn(o SpawnOptions) (res *SpawnResult, err error) {
	p, err := m.plan(o)
	if err != nil {
		return nil, err
	}
	var rollback undo
	defer func() {
		if err == nil {
			return
		}
		// The spawn's error first (its hint, its exit code), then what
		// is left behind.
		if uerr := rollback.run(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("and undoing the spawn failed: %w", uerr))
		}
	}()
	// The record is written first, "starting", with what a later command
	// needs to finish or undo a spawn that crashes half way: the spawning
	// process, the tmux session and window name; then each thing made is
	// added to it as it is made (worktree, window id, process identity).
	meta := map[string]any{}
	for k, v := range o.Metadata {
		meta[k] = v
	}
	delete(meta, StoppedAtKey) // a respawn's: this run has not stopped
	meta[SpawnerKey] = spawner()
	meta[spawnTokenKey] = p.token
	if p.worktree != nil {
		meta[worktreePlanKey] = p.worktree
	}
	if o.Replace {
		meta[replacingKey] = true
	}
	rec := state.Worker{
		Name: o.Name, Status: state.StatusStarting, Cmd: o.Command, Started: state.Now(),
		Cwd: p.cwd, Env: p.env, Tags: o.Tags, Metadata: meta,
	}
	// The window's server is recorded before the window is made, so a
	// crashed spawn's window is looked for there (a respawn's old path
	// is replaced by spawnServer's).
	delete(meta, SocketPathKey)
	// A respawn's old window is not this spawn's.
	delete(meta, WindowIDKey)
	delete(meta, WindowTokenKey)
	if o.Tmux {
		rec.Tmux = &state.TmuxInfo{Session: p.session, Window: o.Name, Socket: state.NullString(p.server.Name)}
		if p.server.Path != "" {
			meta[SocketPathKey] = p.server.Path
		}
	}
	if err = m.reserve(rec, o.Replace, &rollback); err != nil {
		return nil, err
	}
	if o.Worktree {
		if err = m.makeWorktree(p, &rec, &rollback); err != nil {
			return nil, err
		}
		if err = m.note(rec); err != nil {
			return nil, err
		}
	}
	if err = m.launch(p, &rec, &rollback); err != nil {
		return nil, err
	}
	if err = m.commit(&rec); err != nil {
		return nil, err
	}
	res = &SpawnResult{Worker: &rec}
	if p.note != "" {
		res.Notes = append(res.Notes, p.note)
	}
	res.Notes = append(res.Notes, p.notes...)
	if o.ReadyWait && !o.NoStart {
		m.waitSpawned(res, o)
	}
	return res, nil
}

// waitSpawned waits for a spawned agent to look ready (--ready-wait) and
// notes in res what came of it: not ready in time, or exited (with how).
func (m *Manager) waitSpawned(res *SpawnResult, o SpawnOptions) {
	r, err := m.WaitReady(res.Worker, ReadyOptions{Timeout: o.ReadyTimeout, Patterns: o.ReadyPatterns, Progress: o.ReadyProgress})
	if err != nil || r.Ready {
		return
	}
	res.NotReady = true
	if !r.Dead {
		return
	}
	res.Exited = true
	if live, err := m.Refresh([]state.Worker{*res.Worker}); err == nil && live[0].HasExit {
		res.ExitCode, res.HasExit = live[0].ExitCode, true
	}
}

// plan validates the options and resolves defaults.
func (m *Manager) plan(o SpawnOptions) (*spawnPlan, error) {
	if err := state.ValidateName(o.Name); err != nil {
		return nil, err
	}
	if len(o.Command) == 0 {
		return nil, ErrNoCommand
	}
	env, err := ParseEnv(o.Env)
	if err != nil {
		return nil, err
	}
	if !o.Replace { // a respawn keeps the record's tags, whatever made them
		if err := CheckTags(o.Tags); err != nil {
			return nil, err
		}
	}
	cwd, err := resolveDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	p := &spawnPlan{o: o, env: env, cwd: cwd, session: o.Session, token: uuid.NewString()}
	if p.session == "" {
		p.session = m.Session
	}
	if o.Tmux {
		if err := tmux.CheckSessionName(p.session); err != nil {
			return nil, err
		}
		if p.server, err = spawnServer(o); err != nil {
			return nil, fmt.Errorf("failed to create tmux window: %w", err)
		}
	}
	if o.Worktree {
		root, warns, err := worktree.RepoRoot(cwd)
		for _, w := range warns {
			m.warn(w)
		}
		if err != nil {
			return nil, hint.Errorf("run it inside a git repository, or without a worktree (--no-worktree for ralph spawn)",
				"not in a git repository (required for --worktree)")
		}
		if p.worktree, err = planWorktree(o, root); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// spawnServer is the tmux server a spawn creates its window in and
// records: the one given by path (respawn), else the one tmux.ServerFor
// finds (--tmux-socket, $TMUX, the default server).
func spawnServer(o SpawnOptions) (tmux.Server, error) {
	if o.SocketPath == "" {
		return tmux.ServerFor(o.Socket)
	}
	s := tmux.Server{Name: o.Socket, Path: o.SocketPath}
	return s, s.Check()
}

// planWorktree resolves the worktree's path and branch and notes whether
// the path exists already (a rollback removes only one it made).
func planWorktree(o SpawnOptions, root string) (*worktreePlan, error) {
	path := worktree.DefaultPath(root, o.Name)
	if o.WorktreeDir != "" {
		parent, err := filepath.Abs(o.WorktreeDir)
		if err != nil {
			return nil, err
		}
		path = filepath.Join(parent, o.Name)
	}
	branch := o.Branch
	if branch == "" {
		branch = o.Name
	}
	if err := worktree.CheckBranch(root, branch); err != nil {
		return nil, hint.Wrap(err, "give --branch a valid git branch name")
	}
	if o.Base != "" {
		if _, err := worktree.ResolveBase(root, o.Base); err != nil {
			return nil, err
		}
	}
	_, statErr := os.Stat(path)
	return &worktreePlan{Path: path, Branch: branch, BaseRepo: root, PathExisted: statErr == nil}, nil
}

// resolveDir makes dir (default: the current directory) absolute and
// checks that it is a directory.
func resolveDir(dir string) (string, error) {
	var err error
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("directory not found: %s (check --cwd)", dir)
	}
	return dir, nil
}

// reserve writes the record first, so two spawns of one name cannot both
// create a worktree or a window. With replace (respawn) the old record is
// updated in place and restored, stopped, if the spawn fails.
func (m *Manager) reserve(rec state.Worker, replace bool, rollback *undo) error {
	var previous *state.Worker
	err := m.Store.Update(func(r *state.Registry) error {
		old := r.Find(rec.Name)
		if replace {
			if err := checkClaim(old, &rec); err != nil {
				return err
			}
		}
		if old != nil {
			if !replace {
				return hint.Errorf(fmt.Sprintf("remove the old one first: swarm kill %s; swarm clean %s (or pick another --name)", rec.Name, rec.Name),
					"worker '%s' already exists", rec.Name)
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
		return err
	}
	rollback.add(func() error {
		return m.Store.Update(func(r *state.Registry) error {
			if previous == nil {
				r.Remove(rec.Name)
			} else if w := r.Find(rec.Name); w != nil {
				prev := *previous
				prev.Status = state.StatusStopped
				*w = prev
			}
			return nil
		})
	})
	return nil
}

// makeWorktree creates (or reuses) the worker's worktree and moves the
// record into it. A branch it makes is recorded, with the commit it is
// made at, before git makes it: a spawn killed while git runs is rolled
// back with its branch (and never with a branch that existed before).
func (m *Manager) makeWorktree(p *spawnPlan, rec *state.Worker, rollback *undo) error {
	wp := p.worktree
	newBranch := func(commit string) error {
		rec.Metadata[branchMadeKey] = commit
		return m.note(*rec)
	}
	info, err := worktree.Create(wp.BaseRepo, wp.Path, wp.Branch, worktree.CreateOptions{
		Fresh: p.o.FreshBranch, BeforeNewBranch: newBranch, Base: p.o.Base, NewBranch: p.o.NewBranch,
	})
	if err != nil {
		return fmt.Errorf("failed to create worktree: %w", err)
	}
	// Set up below: what the copies and the set-up command put in a
	// worktree this spawn made is this spawn's, and goes with it.
	prepared := false
	if !wp.PathExisted { // we made it: undo removes it (it is clean), and its new branch
		rollback.add(func() error {
			if err := worktree.Undo(info, prepared); err != nil {
				return fmt.Errorf("kept the worktree %s: %w", info.Path, err)
			}
			return nil
		})
		rec.Metadata[worktreeMadeKey] = true
	}
	rec.Worktree = &state.WorktreeInfo{Path: info.Path, Branch: info.Branch, BaseRepo: info.BaseRepo}
	rec.Cwd = info.Path
	recordBase(rec, info)
	p.note = info.Note()
	prepared = p.o.WorktreeSetup != "" || worktree.HasIncludeFile(info.BaseRepo)
	notes, err := m.prepareWorktree(p, info, !wp.PathExisted)
	p.notes = append(p.notes, notes...)
	return err
}

// recordBase keeps in the record what the worktree's branch was made
// from: the base given, else the branch the repository had checked out.
// A respawn's record keeps the base of the first spawn.
func recordBase(rec *state.Worker, info worktree.Info) {
	if _, ok := rec.Metadata[WorktreeBaseKey]; ok && info.Reused != "" {
		return
	}
	base := info.Base
	if base == "" {
		base = worktree.CurrentBranch(info.BaseRepo)
	}
	if base != "" {
		rec.Metadata[WorktreeBaseKey] = base
	}
	if info.BaseCommit != "" {
		rec.Metadata[WorktreeBaseCommitKey] = info.BaseCommit
	}
}

// launch checks the command and starts it in a tmux window or as a
// detached process (nothing with NoStart: the ralph monitor starts it).
// windowScript runs a tmux worker's command and records how it ended:
// "TOKEN CODE" into the exit file (state.WindowExit), whose time is the
// end's, then "term" when the shell itself got SIGTERM (a stop, a
// shutdown): the command did not end by itself, and a worker whose window
// is gone too was lost (swarm restore). tmux 3.3 keeps a dead pane's
// status and time only now and then. The shell catches the signals a
// terminal or kill sends the window's process group, so it outlives the
// command to write the record; its handlers are not inherited, so the
// command gets every signal as before. All but SIGHUP: when the window or
// its tmux server goes, only the shell (the session leader) is hung up,
// and it must die of it for the kernel to hang up the command too (a
// shell that lived on would leave the agent running with no window);
// such an end is not recorded, and the worker is lost.
const windowScript = `f=$1; t=$2; shift 2; h=; trap 'h=term' TERM; trap : INT QUIT; "$@"; c=$?; printf '%s %s %s\n' "$t" "$c" "$h" > "$f"; exit "$c"`

// windowCommand is the argv a tmux worker's window runs: command under
// windowScript.
func windowCommand(exitFile, token string, command []string) []string {
	return append([]string{"sh", "-c", windowScript, "swarm-worker", exitFile, token}, command...)
}

func (m *Manager) launch(p *spawnPlan, rec *state.Worker, rollback *undo) error {
	o := p.o
	if err := checkCommand(o.Command[0], rec.Cwd, p.env); err != nil {
		switch {
		case o.NoStart:
			return err
		case o.Tmux:
			return fmt.Errorf("failed to create tmux window: %w", err)
		default:
			return fmt.Errorf("failed to spawn process: %w", err)
		}
	}
	switch {
	case o.NoStart:
		rec.Status = state.StatusStopped
	case o.Tmux:
		tc := m.TmuxFor(p.server)
		exitFile, err := m.Store.PrepareWindowExit(o.Name)
		if err != nil {
			return fmt.Errorf("failed to create tmux window: %w", err)
		}
		command := windowCommand(exitFile, p.token, o.Command)
		launch, tmuxEnv := m.WindowLaunch(WithCallerPath(p.env), command)
		id, err := tc.NewWindow(tmux.WindowSpec{
			Session: p.session, Name: o.Name, Dir: rec.Cwd, Tag: p.token,
			Width: WindowWidth, Height: WindowHeight,
			Env: tmuxEnv, Command: command, Launch: launch,
			// The pane stays when the command exits: its exit status
			// and last screen remain readable, and the session (and
			// the server) outlive the last worker, as with swarm.py.
			RemainOnExit: true, FocusEvents: o.Socket != "",
		})
		if err != nil {
			return fmt.Errorf("failed to create tmux window: %w", err)
		}
		rollback.add(func() error { return tc.KillWindow(id) })
		// The window carries the spawn's token for its whole life: it
		// is found by id and token (WindowOf).
		rec.Metadata[WindowIDKey] = id
		rec.Metadata[WindowTokenKey] = p.token
	default:
		if err := state.MakeDir(m.Store.Root, m.Store.LogsDir()); err != nil {
			return err
		}
		env := append(append(os.Environ(), EnvList(p.env)...), SpawnTokenEnv+"="+p.token)
		// An earlier run's end is not this one's.
		if err := m.Store.RemoveProcessExit(o.Name); err != nil {
			return fmt.Errorf("failed to spawn process: %w", err)
		}
		t, err := proc.Spawn(proc.StartSpec{
			Command: o.Command, Dir: rec.Cwd, Env: env,
			Stdout: m.stdoutLog(o.Name), Stderr: m.stderrLog(o.Name), LogSink: m.logSink(o.MaxLogSize),
			Supervisor: m.supervisor(o.Name),
		})
		if err != nil {
			return fmt.Errorf("failed to spawn process: %w", err)
		}
		rollback.add(func() error {
			proc.TerminateTarget(t, time.Second) // signals only its own process tree; false when it is gone already
			return nil
		})
		pid := t.PID
		rec.PID = &pid
		rec.Metadata[StartTicksKey] = t.Ticks
		// A respawn's record holds its old process's boot: replace it.
		delete(rec.Metadata, BootIDKey)
		if t.Boot != "" {
			rec.Metadata[BootIDKey] = t.Boot
		}
	}
	return m.note(*rec)
}

// logSink is the capping sink for a process worker's logs, or nil. A max
// of 0 is passed on as it is: logcap reads it as logcap.DefaultMax.
func (m *Manager) logSink(max int64) []string {
	if m.LogSink == nil {
		return nil
	}
	return m.LogSink(max)
}

// note writes what the spawn has made so far into its "starting" record.
func (m *Manager) note(rec state.Worker) error {
	return m.Store.Update(func(r *state.Registry) error {
		w := r.Find(rec.Name)
		if w == nil {
			return fmt.Errorf("worker '%s' was removed while it was being spawned", rec.Name)
		}
		*w = rec
		return nil
	})
}

// commit writes the finished record over the reservation: running (or,
// with NoStart, stopped), no longer starting.
func (m *Manager) commit(rec *state.Worker) error {
	if rec.Status == state.StatusStarting {
		rec.Status = state.StatusRunning
	}
	for _, k := range spawnKeys {
		delete(rec.Metadata, k)
	}
	return m.note(*rec)
}

// WithCallerPath renders env as KEY=VAL entries for a tmux window, adding
// the caller's PATH unless the user set one: the tmux server may have been
// started long ago from a different shell, and the agent should be found
// as the caller finds it.
func WithCallerPath(env map[string]string) []string {
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

// WindowWidth and WindowHeight size the sessions swarm creates while no
// one is attached: wide enough that an agent's footer and status lines do
// not wrap (at tmux's default 80 columns Claude Code's effort gauge wraps
// onto a line of its own), so its screen reads as it was designed.
const (
	WindowWidth  = 200
	WindowHeight = 50
)

// ReadyPoll paces ready detection (docs/commands.md: every 0.5 s): a
// banner is seen within half a second, at one tmux process per look.
const ReadyPoll = 500 * time.Millisecond

// ReadyProgressFirst: a --ready-wait that has waited this long says what
// it waits for (a quick agent says nothing); ReadyProgressEvery: how
// often it then says it still waits.
const (
	ReadyProgressFirst = 2 * time.Second
	ReadyProgressEvery = 10 * time.Second
)

// ReadyOptions control WaitReady.
type ReadyOptions struct {
	Timeout  time.Duration
	Patterns []*regexp.Regexp // more ready screens (--ready-pattern)
	// Progress, when set, is told what is awaited and then, every
	// ReadyProgressEvery, how long it has been.
	Progress func(msg string)
}

// WaitReady polls the worker's screen (or, for a process worker, the end
// of its stdout log) until it looks ready, it exits (Dead), or the
// timeout passes. The agent's profile (internal/agent) decides what ready
// looks like: an input box with no dialog or menu over it.
func (m *Manager) WaitReady(w *state.Worker, o ReadyOptions) (ready.Result, error) {
	screen, err := m.readyScreen(w)
	if err != nil {
		return ready.Result{}, err
	}
	if screen == nil { // its window is gone
		return ready.Result{Dead: true}, nil
	}
	p := agent.For(w.Cmd)
	wo := ready.WaitOptions{
		Interval: min(PollInterval(ReadyPoll), ReadyPoll), Timeout: o.Timeout,
		IsReady: func(s string) bool { return p.Ready(s, o.Patterns...) },
		Stuck:   p.StuckKind,
		OnStuck: func(kind string) {
			m.warn(fmt.Sprintf("agent '%s' is showing %s; it needs a human (swarm attach %s)", w.Name, agent.WithArticle(kind), w.Name))
		},
	}
	if o.Progress != nil {
		said := false
		wo.ProgressFirst, wo.ProgressEvery = ReadyProgressFirst, ReadyProgressEvery
		wo.Progress = func(d time.Duration) {
			if !said {
				said = true
				o.Progress(fmt.Sprintf("waiting for agent '%s' to look ready (%s; up to %s)", w.Name, readyWhat(p, o.Patterns), duration.Format(o.Timeout)))
				return
			}
			o.Progress(fmt.Sprintf("still waiting for agent '%s' to look ready (%s so far)", w.Name, duration.Format(d)))
		}
	}
	return ready.Wait(context.Background(), screen, wo)
}

// readyWhat says in words what counts as ready.
func readyWhat(p *agent.Profile, extra []*regexp.Regexp) string {
	what := "an input prompt"
	if p.CanTellIdle() {
		what = p.Name + "'s input box"
	}
	for _, re := range extra {
		what += fmt.Sprintf(", or /%s/", re)
	}
	return what
}

// readyScreen returns how WaitReady looks at the worker: its pane (one
// tmux process per look: the window id does not change), or the end of a
// process worker's log. nil when its window is gone.
func (m *Manager) readyScreen(w *state.Worker) (ready.Screen, error) {
	if w.Tmux == nil {
		return func() (string, bool, error) {
			s, _ := tailFile(m.stdoutLog(w.Name), 40)
			return s, w.PID == nil || !proc.Alive(*w.PID), nil
		}, nil
	}
	tc := m.tmux(w)
	win, ok, err := FindWindow(tc, w)
	if err != nil || !ok {
		return nil, err
	}
	return PaneScreen(tc, win.WindowID), nil
}

// Poller reads a pane's state and screen in one tmux process.
type Poller interface {
	Poll(target string) (tmux.PaneStatus, string, error)
}

// PaneScreen adapts a pane to ready.Screen: one poll per look, and a pane
// that cannot be polled counts as gone.
func PaneScreen(tc Poller, id string) ready.Screen {
	return func() (string, bool, error) {
		st, s, err := tc.Poll(id)
		if err != nil {
			return "", true, nil
		}
		return s, st.Dead, nil
	}
}
