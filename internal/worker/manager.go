// Package worker manages swarm workers: agent commands running in tmux
// windows or as detached processes, optionally in their own git worktree.
// It ties the registry (internal/state), tmux (internal/tmux), processes
// (internal/proc) and worktrees (internal/worktree) together; the commands
// in cmd/swarm only parse flags, call it and print.
package worker

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// Tmux is what worker operations need from a tmux server. *tmux.Client
// implements it; tests use a fake.
type Tmux interface {
	ListPanes() ([]tmux.Pane, error)
	WindowPanes(target string) ([]tmux.Pane, error)
	Lookup(session, name string) (tmux.Window, bool, error)
	NewWindow(spec tmux.WindowSpec) (string, error)
	KillWindow(target string) error
	Poll(target string) (tmux.PaneStatus, string, error)
	Capture(target string, o tmux.CaptureOptions) (string, error)
	Keyboard
	Attach(session, windowID string) error
}

// Keyboard types into a pane.
type Keyboard interface {
	SendKeys(target string, keys ...string) error
	TypeText(target, text string, enter bool) error
}

// Hooks let the ralph loop (and heartbeats) take part in worker operations
// without this package depending on them.
type Hooks interface {
	// BeforeKill runs before a worker is stopped (a loop is marked killed
	// so its monitor starts no further iteration).
	BeforeKill(w *state.Worker) error
	// AfterKill runs once the worker is stopped (waits for the monitor).
	AfterKill(w *state.Worker)
	// AfterClean runs once a worker's record is removed.
	AfterClean(name string)
	// LoopActive reports whether the worker has a loop that has not
	// ended: kill --all takes such a worker even between iterations.
	LoopActive(name string) bool
	// LoopHolds returns the status ("running", "paused", ...) of the
	// worker's loop if clean must leave the worker for it: the loop has
	// started and not ended. "" means clean may go ahead.
	LoopHolds(name string) string
	// RemoveUnlessLoopHolds runs remove (which removes the worker's
	// record) unless the loop holds the worker, and then returns a
	// *LoopHoldsError. The check and remove are one step with respect to
	// a resume of the loop and the start of its iterations, so clean and
	// resume never both succeed, and no iteration starts for a removed
	// record.
	RemoveUnlessLoopHolds(name string, remove func() error) error
}

// LoopHoldsError is RemoveUnlessLoopHolds's refusal.
type LoopHoldsError struct{ Status string }

func (e *LoopHoldsError) Error() string { return "the worker's ralph loop is " + e.Status }

// Default timings.
const (
	// DefaultKillGrace is the time between SIGTERM and SIGKILL on kill
	// (docs/commands.md: "SIGKILL after 5 s").
	DefaultKillGrace = 5 * time.Second
)

// Manager operates on the workers of one state root.
type Manager struct {
	Store *state.Store
	// Session is the default tmux session for this state root.
	Session string
	// Warn receives warnings ("swarm: warning: " is added by the caller).
	Warn func(string)
	// Hooks, when set, are called around kills and cleans.
	Hooks Hooks
	// KillGrace is how long a stopped worker gets between SIGTERM and
	// SIGKILL.
	KillGrace time.Duration
	// TmuxFor returns the client of a tmux server (Server).
	TmuxFor func(s tmux.Server) Tmux
	// LogSink, when set, caps process workers' logs at max bytes (0:
	// logcap.DefaultMax, as logcap reads it): the argv of a command that
	// copies its input into the file named by the argument appended
	// (swarm _logpipe --max N; see proc.StartSpec).
	LogSink func(max int64) []string
	// Supervisor, when set, starts process workers through a supervisor
	// that records how they ended in exitFile: the argv prefix of the
	// supervising command (swarm _supervise --exit-file F --), to which
	// the command's path and argv are appended (see proc.StartSpec).
	// Without it a process worker's exit status is not known.
	Supervisor func(exitFile string) []string
	// ExecVia, when set, is the argv prefix of the wrapper that starts a
	// tmux window's command with the environment in envFile, which it
	// reads and removes (swarm _exec FILE --; see WindowLaunch). Without
	// it the environment is given to tmux (-e).
	ExecVia func(envFile string) []string
	// EnvUnset are variables of this process that a tmux window's command
	// must not get with the rest of its environment (WindowLaunch): the
	// markers of swarm's background processes.
	EnvUnset []string
	// MonitorCommand, when set, is how a loop's background monitor is
	// started (swarm ralph run NAME): its argv, the program first, and
	// the environment entries it adds. internal/ralph starts it detached
	// (ralph.StartMonitor); without it no background monitor can start.
	MonitorCommand func(name string) (argv, env []string)

	// windowsLockWarned: HoldWindows said once that it went on without
	// the lock.
	windowsLockWarned sync.Once
}

// New returns a manager for the state root.
func New(root string, warn func(string)) *Manager {
	m := &Manager{
		Store:     state.NewStore(root, warn),
		Session:   state.DefaultSession(root),
		Warn:      warn,
		KillGrace: DefaultKillGrace,
	}
	m.TmuxFor = func(s tmux.Server) Tmux {
		c := tmux.NewFor(s)
		c.Exclusive = m.HoldWindows
		return c
	}
	return m
}

// windowsLockWait bounds the wait for the tmux windows lock: its holder
// runs one tmux call, which takes milliseconds unless the server does
// not answer (then the call fails after tmux.DefaultTimeout, and the
// waiter goes on without the lock instead of failing with it).
const windowsLockWait = 2 * time.Second

// HoldWindows takes the state root's tmux windows lock
// (state.Store.LockWindows) for a window's end or a control client's
// attach (tmux.Client.Exclusive) and returns its release. When the lock
// cannot be had (held too long, a lock file swarm refuses) the caller
// goes on without it, which it says once: a kill must not fail for a
// monitor stuck on a stopped server, and the crash the lock guards
// against needs both at once.
func (m *Manager) HoldWindows() (release func()) {
	release, err := m.Store.LockWindows(windowsLockWait)
	if err != nil {
		m.windowsLockWarned.Do(func() {
			m.warn(fmt.Sprintf("going on without the tmux windows lock: %v", err))
		})
		return func() {}
	}
	return release
}

// PollInterval returns $SWARM_POLL_INTERVAL when set to a valid duration
// (tests shorten every poll with it), else def.
func PollInterval(def time.Duration) time.Duration {
	if v := os.Getenv("SWARM_POLL_INTERVAL"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return def
}

func (m *Manager) warn(msg string) {
	if m.Warn != nil {
		m.Warn(msg)
	}
}

// tmux returns the client for a worker's tmux server.
func (m *Manager) tmux(w *state.Worker) Tmux {
	return m.TmuxFor(Server(w))
}

// Server is the tmux server a worker's window lives in: every command
// that acts on the window builds its client from this. It is the socket
// path recorded at spawn (SocketPathKey) with the record's -L socket
// name; a record without a path (written by swarm.py or an older swarm)
// has only the name, or nothing: tmux's default server, or inside tmux
// the one $TMUX names, as before. A path that is not a string is kept as
// an invalid one, so the worker is set aside rather than looked for on
// the wrong server.
func Server(w *state.Worker) tmux.Server {
	if w.Tmux == nil {
		return tmux.Server{}
	}
	s := tmux.Server{Name: string(w.Tmux.Socket)}
	switch p := w.Metadata[SocketPathKey].(type) {
	case nil:
	case string:
		s.Path = p
	default:
		// A number, list or object never prints as an absolute path,
		// so Check refuses it.
		s.Path = fmt.Sprint(p)
	}
	return s
}

// Socket is the -L socket name a worker runs on ("" = none).
func Socket(w *state.Worker) string {
	if w.Tmux == nil {
		return ""
	}
	return string(w.Tmux.Socket)
}

// Get returns a worker's record.
func (m *Manager) Get(name string) (*state.Worker, error) {
	w, err := m.Store.Get(name)
	if errors.Is(err, state.ErrNotFound) {
		return nil, notFound(name)
	}
	return w, err
}

// SetStatus records a worker's status.
func (m *Manager) SetStatus(name, status string) error {
	return m.Store.Update(func(r *state.Registry) error {
		if w := r.Find(name); w != nil {
			w.Status = status
		}
		return nil
	})
}

// SetMetadata merges kv into a worker's metadata and, unless status is
// empty, sets its status, in one locked update.
func (m *Manager) SetMetadata(name string, kv map[string]any, status string) error {
	return m.Store.Update(func(r *state.Registry) error {
		w := r.Find(name)
		if w == nil {
			return nil
		}
		if w.Metadata == nil {
			w.Metadata = map[string]any{}
		}
		for k, v := range kv {
			w.Metadata[k] = v
		}
		if status != "" {
			w.Status = status
		}
		return nil
	})
}

// Remove deletes a worker's record.
func (m *Manager) Remove(name string) error {
	return m.Store.Update(func(r *state.Registry) error {
		r.Remove(name)
		return nil
	})
}
