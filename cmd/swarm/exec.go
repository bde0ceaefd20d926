package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
)

// execCommand is the hidden command a tmux window's command starts under:
// "swarm _exec ENVFILE -- CMD...". It reads the window's environment from
// ENVFILE (--env values, often secrets), removes the file and becomes CMD
// with that environment, so no value is on tmux's argv or in a tmux
// session's environment (worker.WindowLaunch).
const execCommand = "_exec"

// execVia is the argv prefix of that wrapper: this very binary.
func execVia(envFile string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, execCommand, envFile, "--"}
}

type execOptions struct {
	IO      *IO
	EnvFile string
	Command []string
}

func newCmdExec(f *factory, runF func(*execOptions) error) *cobra.Command {
	opts := &execOptions{IO: f.IO}
	return &cobra.Command{
		Use:    execCommand + " ENVFILE -- COMMAND...",
		Short:  "Run COMMAND with the environment in ENVFILE, removing the file (internal)",
		Hidden: true,
		// Everything after "--" is the command's, flags included.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 || args[1] != "--" {
				return usagef("%s expects ENVFILE -- COMMAND...", cmd.CommandPath())
			}
			opts.EnvFile, opts.Command = args[0], args[2:]
			if runF != nil {
				return runF(opts)
			}
			return runExec(opts)
		},
	}
}

// runExec returns only when the command could not be run: with a shell's
// exit code for that (127 not found, 126 not runnable).
func runExec(opts *execOptions) error {
	env, err := state.TakeEnvFile(opts.EnvFile)
	if err != nil {
		return fail(proc.ExitNotExecutable, "cannot read the environment of %s: %w", opts.Command[0], err)
	}
	err = proc.Exec(opts.Command, env)
	var ee *proc.ExecError
	if errors.As(err, &ee) {
		return &exitError{code: ee.Code, err: ee.Err}
	}
	return fail(proc.ExitNotExecutable, "%w", err)
}
