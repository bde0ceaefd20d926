package worker

import (
	"errors"
	"os"
	"strings"
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
//
// With ExecVia the file also holds this process's own environment
// beneath env (callerEnv): the command gets the environment of the swarm
// command that starts it, as a process worker does, whatever the tmux
// server's. tmux clients run with a minimal environment (tmux's
// clientEnv), so a server swarm starts holds no secret of the caller's
// shell, and a worker would otherwise get none of it.
func (m *Manager) WindowLaunch(env, command []string) (launch func() ([]string, func(), error), tmuxEnv []string) {
	if m.ExecVia == nil {
		return nil, env
	}
	return func() ([]string, func(), error) {
		path, err := m.Store.WriteEnvFile(callerEnv(os.Environ(), m.EnvUnset, env))
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

// windowOwnEnv are the variables a window's command gets from tmux or its
// shell, never from the command that started it: which server and pane it
// is in, its terminal, its working directory.
var windowOwnEnv = []string{"TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "PWD", "OLDPWD", "SHLVL", "_"}

// callerEnv is environ without the window's own variables, the keys in
// unset and the keys env sets, followed by env: env wins, and every key is
// there once.
func callerEnv(environ, unset, env []string) []string {
	drop := map[string]bool{}
	for _, k := range windowOwnEnv {
		drop[k] = true
	}
	for _, k := range unset {
		drop[k] = true
	}
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(environ)+len(env))
	for _, e := range environ {
		if k, _, ok := strings.Cut(e, "="); ok && !drop[k] {
			out = append(out, e)
		}
	}
	return append(out, env...)
}
