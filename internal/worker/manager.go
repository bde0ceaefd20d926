// Package worker manages swarm workers: agent commands running in tmux
// windows or as detached processes, optionally in their own git worktree.
// It ties the registry (internal/state), tmux (internal/tmux), processes
// (internal/proc) and worktrees (internal/worktree) together; the commands
// in cmd/swarm only parse flags, call it and print.
package worker

import (
	"errors"
	"os"
	"time"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
)

// Hooks let the ralph loop take part in worker operations without this
// package depending on it.
type Hooks interface {
	// BeforeKill runs before a worker is stopped (the loop is marked
	// killed so its monitor starts no further iteration).
	BeforeKill(w *state.Worker) error
	// AfterKill runs once the worker is stopped (waits for the monitor).
	AfterKill(w *state.Worker)
}

// Manager operates on the workers of one state root.
type Manager struct {
	Store *state.Store
	// Session is the default tmux session for this state root.
	Session string
	// Warn receives warnings ("swarm: warning: " is added by the caller).
	Warn func(string)
	// Hooks, when set, are called around kills.
	Hooks Hooks
	// KillGrace is how long a stopped worker gets between SIGTERM and
	// SIGKILL.
	KillGrace time.Duration
}

// New returns a manager for the state root.
func New(root string, warn func(string)) *Manager {
	return &Manager{
		Store:     state.NewStore(root, warn),
		Session:   state.DefaultSession(root),
		Warn:      warn,
		KillGrace: 5 * time.Second,
	}
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

// Tmux returns the tmux client for a worker's socket.
func Tmux(w *state.Worker) *tmux.Client {
	if w.Tmux == nil {
		return tmux.New("")
	}
	return tmux.New(string(w.Tmux.Socket))
}

// Get returns a worker's record.
func (m *Manager) Get(name string) (*state.Worker, error) {
	w, err := m.Store.Get(name)
	if errors.Is(err, state.ErrNotFound) {
		return nil, notFound(name)
	}
	return w, err
}
