package worker

import (
	"errors"
	"fmt"

	"github.com/swarmtools/swarm/internal/hint"
)

// ErrNotFound marks errors about a worker that has no record; commands map
// it to their own exit code (2 for status and peek).
var ErrNotFound = errors.New("not found")

func notFound(name string) error {
	return hint.Wrap(fmt.Errorf("worker '%s' %w", name, ErrNotFound), "swarm ls lists the workers")
}

// ErrNotRunning marks operations that need a running worker.
var ErrNotRunning = errors.New("is not running")

// notTmux is the error of an operation on a tmux window asked of a process
// worker.
func notTmux(name string) error {
	return hint.Errorf(fmt.Sprintf("its output is in its log: swarm logs %s", name), "worker '%s' is not a tmux worker", name)
}

// notRunning is the error of an operation that needs a running worker
// (or, for peek, its window).
func notRunning(name string) error {
	return hint.Wrap(fmt.Errorf("worker '%s' %w", name, ErrNotRunning), "start it again with: swarm respawn %s", name)
}

// ErrNoCommand is a spawn with no command to run: swarm.py's message,
// which every spawn (spawn, spawn --ralph, ralph spawn) prints.
var ErrNoCommand = errors.New("no command provided (use -- command...)")

// ErrTimeout marks a wait that ran out of time.
var ErrTimeout = errors.New("timeout")
