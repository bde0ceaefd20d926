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
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

// ralphLong is the ralph group's help: what a loop is and how to write a
// prompt for one. swarm.py's help tests look for some of its phrases
// ("Ralph Wiggum pattern", "Prompt Design Principles", "Quick Reference").
const ralphLong = `A ralph loop (the Ralph Wiggum pattern) runs an agent on the same prompt again
and again, each time as a fresh process with an empty context. Nothing is
remembered between iterations except what is on disk: the files and git history
of the worker's directory. Work too large for one agent's context windows gets
done in many short sessions, each one picking up where the files say the last
one stopped.

A background monitor drives each loop: it types the prompt, watches the screen,
restarts the agent when it exits or goes quiet, and stops the loop on a
completion signal, the iteration cap, --max-time, or repeated failure.

Prompt Design Principles:
  - ONE task per iteration: the agent picks the most important unfinished item,
    does it, commits, and exits. Small steps survive restarts.
  - Keep the plan on disk: a TODO or plan file the agent reads first and
    updates last is the loop's only memory.
  - Say how to check the work: the tests or commands that must pass before a
    commit (and give them to --check so a false "done" is rejected).
  - Say how to finish: <promise>COMPLETE</promise> when nothing is left,
    <promise>BLOCKED:reason</promise> when it cannot go on alone.
  - The prompt file is read again every iteration: edit it to steer the loop.

Quick Reference:
  swarm ralph init                      write a starter PROMPT.md to edit
  swarm ralph spawn --name N --prompt-file PROMPT.md -- claude
  swarm ralph status N                  iteration, ETA, how it ended
  swarm ralph logs N                    iteration events
  swarm peek N                          the agent's screen now
  swarm send N "text"                   type into the running agent
  swarm ralph pause N / resume N        hold after this iteration / go on
  swarm ralph stop N                    end the loop and its agent
  swarm ralph wait N                    block until it ends (exit code says how)
  swarm ralph clean N                   remove an ended loop's state`

// newCmdRalph is the ralph command group; run alone or with an unknown
// subcommand it is a usage error (requireSubcommands).
func newCmdRalph(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ralph",
		Short: "Run and control ralph loops (agents restarted with a fresh context until done)",
		Long:  ralphLong,
		Example: `  swarm ralph init
  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude
  swarm ralph status builder
  swarm ralph wait builder; echo "loop exit $?"`,
	}
	cmd.AddCommand(
		newCmdRalphSpawn(f, nil), newCmdRalphRun(f, nil),
		newCmdRalphPause(f, nil), newCmdRalphResume(f, nil), newCmdRalphStop(f, nil),
		newCmdRalphStatus(f, nil), newCmdRalphList(f, nil), newCmdRalphLogs(f, nil),
		newCmdRalphClean(f, nil), newCmdRalphWait(f, nil), newCmdRalphInit(f, nil), newCmdRalphTemplate(f, nil),
		newCmdRalphSet(f, nil),
	)
	return cmd
}

// ralphError maps loop errors: warnings print as warnings and exit 0.
func ralphError(io *IO, err error) error {
	var w *ralph.ErrWarning
	if errors.As(err, &w) {
		io.Warn(w.Msg)
		return nil
	}
	return workerError(err, exitFail)
}

// loopOptions is the options of the ralph commands that take one loop
// name and nothing else (run, pause, resume, stop).
type loopOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
	// Kill holds ralph stop's --rm-worktree and --force-dirty (as kill).
	Kill worker.KillOptions
}

func newCmdRalphRun(f *factory, runF func(*loopOptions) error) *cobra.Command {
	opts := &loopOptions{IO: f.IO, Manager: f.Manager}
	return &cobra.Command{
		Use:   "run NAME",
		Short: "Run a loop in this terminal (after spawn --no-run, or to take over a loop) and exit with its code",
		Long: `Run the loop's monitoring loop in this terminal until the loop ends, and exit
with the loop's exit code: 0 completed or cap reached, 1 failed or killed,
2 BLOCKED, 3 DECIDE, 4 cap reached not complete, 130 Ctrl-C. Use it after swarm ralph spawn --no-run, or
to drive a loop from a script. A paused loop is resumed. Only one monitor runs
a loop at a time: while a background monitor holds it, run refuses.`,
		Example: `  swarm ralph spawn --name job --prompt-file PROMPT.md --no-run -- claude
  swarm ralph run job`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runRalphRun(opts)
		},
	}
}

func runRalphRun(opts *loopOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if !isBackgroundMonitor() {
		ralph.UnpauseForRun(m, opts.Name)
	}
	return runEngine(opts.IO, m, opts.Name)
}

// loopControl is what ralph pause, resume or stop does.
type loopControl struct {
	verb, short string
	done        string // printed on success, %s is the name
	call        func(*worker.Manager, string) error
}

func newCmdRalphPause(f *factory, runF func(*loopOptions) error) *cobra.Command {
	return newCmdLoopControl(f, runF, loopControl{"pause",
		"Pause a loop: the running agent continues, no new iteration starts",
		"paused ralph loop for %s", ralph.PauseLoop})
}

func newCmdRalphResume(f *factory, runF func(*loopOptions) error) *cobra.Command {
	return newCmdLoopControl(f, runF, loopControl{"resume",
		"Resume a loop from its current iteration (also recovers a loop whose monitor died)",
		"resumed ralph loop for %s", ralph.ResumeLoop})
}

func newCmdRalphStop(f *factory, runF func(*loopOptions) error) *cobra.Command {
	cmd, opts := loopControlCmd(f, runF, loopControl{"stop",
		"Stop a loop for good and its agent (same as swarm kill)", "killed %s", nil})
	cmd.Flags().BoolVar(&opts.Kill.RmWorktree, "rm-worktree", false, "also remove the worker's worktree")
	cmd.Flags().BoolVar(&opts.Kill.ForceDirty, "force-dirty", false, "remove the worktree even with uncommitted changes")
	return cmd
}

func newCmdLoopControl(f *factory, runF func(*loopOptions) error, c loopControl) *cobra.Command {
	cmd, _ := loopControlCmd(f, runF, c)
	return cmd
}

// loopControlCmd builds a command that acts on one loop; c.call nil means
// ralph stop (the kill options are in the loop options).
func loopControlCmd(f *factory, runF func(*loopOptions) error, c loopControl) (*cobra.Command, *loopOptions) {
	opts := &loopOptions{IO: f.IO, Manager: f.Manager}
	if c.call == nil {
		c.call = func(m *worker.Manager, name string) error { return ralph.StopLoop(m, name, opts.Kill) }
	}
	return &cobra.Command{
		Use:     c.verb + " NAME",
		Short:   c.short,
		Example: "  swarm ralph " + c.verb + " builder",
		Args:    argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runLoopControl(opts, c)
		},
	}, opts
}

func runLoopControl(opts *loopOptions, c loopControl) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if err := c.call(m, opts.Name); err != nil {
		return ralphError(opts.IO, err)
	}
	fmt.Fprintf(opts.IO.Out, "%s\n", fmt.Sprintf(c.done, opts.Name))
	return nil
}

type ralphCleanOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string // "" with All
	All  bool
}

func newCmdRalphClean(f *factory, runF func(*ralphCleanOptions) error) *cobra.Command {
	opts := &ralphCleanOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "clean [NAME]",
		Short: "Remove the ralph state of loops that are not running",
		Example: `  swarm ralph clean builder
  swarm ralph clean --all`,
		Args: argsRange(0, 1, "a loop name, or --all"),
		RunE: nameOrAllRunE(&opts.Name, &opts.All, opts, runF, runRalphClean),
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every loop without a running monitor")
	return cmd
}

func runRalphClean(opts *ralphCleanOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.All {
		names, err := ralph.CleanAllLoops(m)
		for _, n := range names {
			fmt.Fprintf(opts.IO.Out, "cleaned ralph state for %s\n", n)
		}
		return workerError(err, exitFail)
	}
	if err := ralph.CleanLoop(m, opts.Name); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintf(opts.IO.Out, "cleaned ralph state for %s\n", opts.Name)
	return nil
}

type ralphWaitOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name    string
	Timeout time.Duration // 0: never
}

func newCmdRalphWait(f *factory, runF func(*ralphWaitOptions) error) *cobra.Command {
	opts := &ralphWaitOptions{IO: f.IO, Manager: f.Manager}
	var secs int
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a loop ends and exit with its code (0 done, 1 failed/killed, 2 blocked, 3 decide, 4 cap not complete)",
		Long: `Block until the loop ends, print how it ended, and exit with the loop's exit
code: 0 completed or cap reached, 1 failed or killed, 2 BLOCKED, 3 DECIDE,
4 cap reached not complete (its last completion was rejected by --check or
--require-change, or --fail-on-cap), 130 interrupted. A paused loop has not ended: wait keeps waiting. On --timeout
it prints "NAME: still running (timeout)" and exits 124.`,
		Example: `  swarm ralph wait builder --timeout 3600
  case $? in 0) echo done;; 2) echo blocked;; 3) echo decide;; 4) echo not complete;; *) echo failed;; esac`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.Timeout = time.Duration(secs) * time.Second
			if runF != nil {
				return runF(opts)
			}
			return runRalphWait(opts)
		},
	}
	intVar(cmd.Flags(), &secs, "timeout", 0, 0, noMax, "give up after this many seconds (0: never)")
	return cmd
}

func runRalphWait(opts *ralphWaitOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := ralph.WaitLoop(ctx, m, opts.Name, opts.Timeout)
	if err != nil {
		if ctx.Err() != nil {
			return exitCode(exitInterrupted)
		}
		return workerError(err, exitFail)
	}
	if res.TimedOut {
		fmt.Fprintf(opts.IO.Out, "%s: still running (timeout)\n", opts.Name)
		return exitCode(exitTimeout)
	}
	fmt.Fprintf(opts.IO.Out, "%s: %s\n", opts.Name, termtext.Line(endSummary(res.State)))
	if res.State.ExitHint != "" {
		// The fix for a loop a human must unblock (docs/completion.md).
		fmt.Fprintf(opts.IO.Err, "hint: %s\n", termtext.Line(string(res.State.ExitHint)))
	}
	if res.Code != exitOK {
		return exitCode(res.Code)
	}
	return nil
}

// endSummary says how a loop ended: "complete after 2 iterations",
// "blocked after 3 iterations: reason" (the agent's words: print it
// through termtext.Line).
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
