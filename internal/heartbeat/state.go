// Package heartbeat nudges a worker on a schedule: every interval it types
// a message (default "continue") into the worker's tmux pane, so an agent
// stalled on a rate limit retries when the limit renews.
//
// Each heartbeat is one background process (this binary, "swarm heartbeat
// run W"), started detached by Start with internal/daemon. It holds
// heartbeats/W.lock for its whole life: that lock, not a stored pid, says
// whether it is alive, and it makes a second process for the same worker
// impossible. Its configuration and progress live in heartbeats/W.json, in
// swarm.py's format (a superset), kept by internal/state (HeartbeatStore):
// every change to that file is a locked read-modify-write, so a stop or
// pause written by a command is never undone by the process.
package heartbeat

import (
	"time"

	"github.com/swarmtools/swarm/internal/state"
)

// Status values, as swarm.py writes them.
const (
	StatusActive  = state.HeartbeatActive
	StatusPaused  = state.HeartbeatPaused
	StatusExpired = state.HeartbeatExpired
	StatusStopped = state.HeartbeatStopped
)

// DefaultMessage is what a beat types unless told otherwise.
const DefaultMessage = state.HeartbeatDefaultMessage

// State is heartbeats/W.json (state.Heartbeat).
type State = state.Heartbeat

// Stamp is a timestamp of the state, as found in the file (state.Stamp).
type Stamp = state.Stamp

// StampOf formats t as swarm.py does, in UTC.
func StampOf(t time.Time) Stamp { return state.StampOf(t) }

// Store is the heartbeat files under one state root (internal/state's
// HeartbeatStore), with this package's control of their processes.
type Store struct {
	*state.HeartbeatStore
}

// NewStore returns the heartbeat store under root; warn receives warnings
// (a corrupt file being reset), nil drops them.
func NewStore(root string, warn func(string)) *Store {
	return &Store{state.NewStore(root, warn).Heartbeats()}
}
