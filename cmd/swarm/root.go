package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// IO holds the streams commands read and write, injected so tests can run
// commands in-process.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// DefaultIO is the process's own stdio.
func DefaultIO() *IO { return &IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// Warn prints "swarm: warning: msg" on stderr.
func (s *IO) Warn(msg string) { fmt.Fprintf(s.Err, "swarm: warning: %s\n", msg) }

// exitError carries a command's exit code and its message (printed as
// "swarm: error: msg" unless empty).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// exitCode ends a command with a code and no message.
func exitCode(code int) error { return &exitError{code: code} }

// usageError marks bad command lines (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// env is what every command needs: streams, and the state root resolved
// once (SPEC: made absolute once at start).
type env struct {
	io   *IO
	root string
}

func (e *env) manager() *worker.Manager {
	m := worker.New(e.root, e.io.Warn)
	m.Hooks = ralph.NewHooks(m)
	return m
}

// Main runs swarm with args and returns the process exit code.
func Main(args []string, streams *IO) int {
	root, err := state.Root()
	if err != nil {
		fmt.Fprintf(streams.Err, "swarm: error: %v\n", err)
		return 1
	}
	e := &env{io: streams, root: root}
	cmd := newRootCmd(e)
	cmd.SetArgs(args)
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.Err)
	err = cmd.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	var ue *usageError
	switch {
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(streams.Err, "swarm: error: %s\n", ee.msg)
		}
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(streams.Err, "swarm: error: %s\n", ue.err)
		return 2
	case isCobraUsage(err):
		fmt.Fprintf(streams.Err, "swarm: error: %s (see: swarm --help)\n", err)
		return 2
	default:
		fmt.Fprintf(streams.Err, "swarm: error: %s\n", err)
		return 1
	}
}

// isCobraUsage recognises the usage errors cobra reports itself (flag
// errors already arrive as usageError through SetFlagErrorFunc).
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "required flag")
}

func newRootCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run AI coding agents as workers in tmux, and drive them in ralph loops",
		Long: `swarm runs agent CLIs (claude, codex, aider, opencode, or any command) as
workers in tmux windows or as background processes, each optionally in its own
git worktree, and drives them in ralph loops that restart the agent with a
fresh context until the work is done.

State lives in $SWARM_HOME (else $SWARM_DIR, else ~/.swarm).`,
		Example: `  swarm spawn --name fix-tests --tmux --worktree -- claude
  swarm ls
  swarm peek fix-tests
  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude --dangerously-skip-permissions`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetVersionTemplate("swarm {{.Version}}\n")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%v (see: %s --help)", err, c.CommandPath())}
	})
	cmd.AddCommand(
		newSpawnCmd(e), newLsCmd(e), newStatusCmd(e), newPeekCmd(e), newLogsCmd(e),
		newAttachCmd(e), newSendCmd(e), newInterruptCmd(e), newEOFCmd(e), newWaitCmd(e),
		newKillCmd(e), newCleanCmd(e), newRespawnCmd(e), newInitCmd(e), newVersionCmd(),
		newRalphCmd(e),
	)
	return cmd
}

// argsRange validates the number of positional arguments as a usage error.
func argsRange(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			return usagef("%s expects %s (see: %s --help)", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}

// workerError maps a worker error to its exit code: not found is notFound
// (2 for status and peek, 1 elsewhere), anything else 1.
func workerError(err error, notFoundCode int) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, worker.ErrNotFound) {
		return fail(notFoundCode, "%v", err)
	}
	return fail(1, "%v", err)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the swarm version",
		Args:  argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "swarm %s\n", version)
			return nil
		},
	}
}
