package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// IO holds the streams commands read and write, injected so tests can run
// commands in-process.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// DefaultIO is the process's own stdio.
func DefaultIO() *IO { return &IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// Warn prints "swarm: warning: msg" on stderr, msg as printable text
// (plainText, as report prints errors).
func (s *IO) Warn(msg string) { fmt.Fprintf(s.Err, "swarm: warning: %s\n", plainText(msg)) }

// factory is what every command is built from (the GitHub CLI's
// cmdutil.Factory): the streams, and the state root and worker manager,
// resolved only when a command runs. So --help, version and every usage
// error touch neither the environment's state root nor the disk.
type factory struct {
	IO *IO

	once    sync.Once
	root    string // the state root; "" until resolved
	rootErr error
}

// newFactory returns a factory on streams. root is the state root; ""
// resolves it on first use from $SWARM_HOME, $SWARM_DIR or ~/.swarm, made
// absolute once (docs/state.md). Tests pass a root of their own, so they need no
// environment and can run in parallel.
func newFactory(streams *IO, root string) *factory {
	return &factory{IO: streams, root: root}
}

// Root returns the absolute state root. A root another user owns or can
// write is refused here, before any command reads or writes it, unless
// the user opted in (state.CheckRoot).
func (f *factory) Root() (string, error) {
	f.once.Do(func() {
		if f.root == "" {
			f.root, f.rootErr = state.Root()
		}
		if f.rootErr == nil {
			f.rootErr = state.CheckRoot(f.root)
		}
	})
	return f.root, f.rootErr
}

// Manager returns a worker manager on the state root, with the worker
// hooks (kill and clean stop a worker's heartbeat and loop too).
func (f *factory) Manager() (*worker.Manager, error) {
	root, err := f.Root()
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	return newManager(root, f.IO.Warn), nil
}

// newManager is the worker manager every command uses: on root, warnings
// sent to warn, the worker hooks, output logs capped by swarm's own log
// pipe, process workers supervised by swarm's own supervisor (their exit
// codes), tmux windows' environments passed through swarm _exec, and
// loops' background monitors started as swarm ralph run.
func newManager(root string, warn func(string)) *worker.Manager {
	m := worker.New(root, warn)
	m.Hooks = newWorkerHooks(root, m)
	m.LogSink = logSink
	m.Supervisor = supervisor
	m.ExecVia = execVia
	m.EnvUnset = []string{monitorMarker, heartbeatMarker}
	m.MonitorCommand = monitorCommand
	return m
}
