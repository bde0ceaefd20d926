package worker

import (
	"errors"
	"os"
)

var errNoExecVia = errors.New("cannot find the swarm binary that starts the window's command")

// WindowLaunch returns how a tmux window runs command with env (KEY=VAL
// entries, often secrets given with --env). With ExecVia, launch writes
// env to a private one-time file under the state root and returns the
// command behind the wrapper that reads and removes it, and undo, which
// removes the file if the window was not made: no value is on tmux's argv
// (which ps shows to every user, for the server's whole life when the
// call starts the server) or in the session's environment (which later
// windows inherit). Without ExecVia, launch is nil and tmuxEnv is env,
// for tmux -e.
func (m *Manager) WindowLaunch(env, command []string) (launch func() ([]string, func(), error), tmuxEnv []string) {
	if m.ExecVia == nil {
		return nil, env
	}
	return func() ([]string, func(), error) {
		path, err := m.Store.WriteEnvFile(env)
		if err != nil {
			return nil, nil, err
		}
		prefix := m.ExecVia(path)
		if len(prefix) == 0 {
			return nil, nil, errors.Join(errNoExecVia, os.Remove(path))
		}
		cmd := append(append([]string{}, prefix...), command...)
		return cmd, func() { _ = os.Remove(path) }, nil // undone when the window did not start: a file left is swept (sweepEnvFiles)
	}, nil
}

// LaunchOnce is WindowLaunch for a single try (respawn-pane): the command
// to run, the env for tmux -e (nil with ExecVia) and the undo to call if
// the pane was not respawned (never nil).
func (m *Manager) LaunchOnce(env, command []string) (cmd, tmuxEnv []string, undo func(), err error) {
	launch, tmuxEnv := m.WindowLaunch(env, command)
	if launch == nil {
		return command, tmuxEnv, func() {}, nil
	}
	cmd, undo, err = launch()
	return cmd, nil, undo, err
}
