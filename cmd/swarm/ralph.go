package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
)

func newRalphCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ralph",
		Short: "Run and control ralph loops (agents restarted with a fresh context until done)",
		Example: `  swarm ralph init
  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude
  swarm ralph status builder
  swarm ralph wait builder; echo "loop exit $?"`,
	}
	cmd.AddCommand(
		newRalphSpawnCmd(e), newRalphRunCmd(e), newRalphPauseCmd(e), newRalphResumeCmd(e),
		newRalphStopCmd(e), newRalphStatusCmd(e), newRalphListCmd(e), newRalphLogsCmd(e),
		newRalphCleanCmd(e), newRalphWaitCmd(e), newRalphInitCmd(e), newRalphTemplateCmd(e),
	)
	return cmd
}

// ralphError maps loop errors: warnings print as warnings and exit 0.
func ralphError(e *env, err error) error {
	var w *ralph.ErrWarning
	if errors.As(err, &w) {
		e.io.Warn(w.Msg)
		return nil
	}
	return workerError(err, 1)
}

func newRalphRunCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME",
		Short: "Run a loop in this terminal (after spawn --no-run, or to take over a loop) and exit with its code",
		Long: `Run the loop in this terminal until it ends, and exit with the loop's exit code:
0 completed or cap reached, 1 failed or killed, 2 BLOCKED, 3 DECIDE, 130 Ctrl-C.
A paused loop is resumed. Only one monitor runs a loop at a time.`,
		Example: `  swarm ralph spawn --name job --prompt-file PROMPT.md --no-run -- claude
  swarm ralph run job`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m := e.manager()
			if !ralph.IsBackgroundMonitor() {
				ralph.UnpauseForRun(m, args[0])
			}
			return runEngine(e, m, args[0])
		},
	}
}

func newRalphPauseCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "pause NAME",
		Short:   "Pause a loop: the running agent continues, no new iteration starts",
		Example: `  swarm ralph pause builder`,
		Args:    argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ralph.PauseLoop(e.manager(), args[0]); err != nil {
				return ralphError(e, err)
			}
			fmt.Fprintf(e.io.Out, "paused ralph loop for %s\n", args[0])
			return nil
		},
	}
}

func newRalphResumeCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "resume NAME",
		Short:   "Resume a loop from its current iteration (also recovers a loop whose monitor died)",
		Example: `  swarm ralph resume builder`,
		Args:    argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ralph.ResumeLoop(e.manager(), args[0]); err != nil {
				return ralphError(e, err)
			}
			fmt.Fprintf(e.io.Out, "resumed ralph loop for %s\n", args[0])
			return nil
		},
	}
}

func newRalphStopCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a loop for good and its agent (same as swarm kill)",
		Example: `  swarm ralph stop builder`,
		Args:    argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ralph.StopLoop(e.manager(), args[0]); err != nil {
				return ralphError(e, err)
			}
			fmt.Fprintf(e.io.Out, "killed %s\n", args[0])
			return nil
		},
	}
}

func newRalphCleanCmd(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "clean [NAME]",
		Short: "Remove the ralph state of loops that are not running",
		Example: `  swarm ralph clean builder
  swarm ralph clean --all`,
		Args: argsRange(0, 1, "a loop name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m := e.manager()
			if all {
				if len(args) > 0 {
					return usagef("give a loop name or --all, not both")
				}
				names, err := ralph.CleanAllLoops(m)
				for _, n := range names {
					fmt.Fprintf(e.io.Out, "cleaned ralph state for %s\n", n)
				}
				return workerError(err, 1)
			}
			if len(args) == 0 {
				return usagef("give a loop name or --all (see: swarm ralph clean --help)")
			}
			if err := ralph.CleanLoop(m, args[0]); err != nil {
				return fail(1, "%v", err)
			}
			fmt.Fprintf(e.io.Out, "cleaned ralph state for %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every loop without a running monitor")
	return cmd
}

func newRalphWaitCmd(e *env) *cobra.Command {
	var timeout int
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a loop ends and exit with its code (0 done, 1 failed/killed, 2 blocked, 3 decide)",
		Long: `Block until the loop ends, print how it ended, and exit with the loop's exit
code: 0 completed or cap reached, 1 failed or killed, 2 BLOCKED, 3 DECIDE,
130 interrupted. A paused loop has not ended: wait keeps waiting. On --timeout
it prints "NAME: still running (timeout)" and exits 124.`,
		Example: `  swarm ralph wait builder --timeout 3600
  case $? in 0) echo done;; 2) echo blocked;; 3) echo decide;; *) echo failed;; esac`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usagef("--timeout must not be negative")
			}
			name := args[0]
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			res, err := ralph.WaitLoop(ctx, e.manager(), name, time.Duration(timeout)*time.Second)
			if err != nil {
				if ctx.Err() != nil {
					return exitCode(130)
				}
				return workerError(err, 1)
			}
			if res.TimedOut {
				fmt.Fprintf(e.io.Out, "%s: still running (timeout)\n", name)
				return exitCode(124)
			}
			fmt.Fprintf(e.io.Out, "%s: %s\n", name, endSummary(res.State))
			if res.Code != 0 {
				return exitCode(res.Code)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&timeout, "timeout", 0, "give up after this many seconds (0: never)")
	return cmd
}

// endSummary says how a loop ended: "complete after 2 iterations",
// "blocked after 3 iterations: reason".
func endSummary(st *state.Ralph) string {
	s := fmt.Sprintf("%s after %d iterations", st.ExitReason, st.CurrentIteration)
	if st.ExitReason == "" {
		s = fmt.Sprintf("%s after %d iterations", st.Status, st.CurrentIteration)
	}
	if st.ExitDetail != "" {
		s += ": " + string(st.ExitDetail)
	}
	return s
}
