package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/heartbeat"
	"github.com/swarmtools/swarm/internal/memtrim"
	"github.com/swarmtools/swarm/internal/notify"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worker"
)

type ralphSpawnOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	// Spawn is the loop to start; Spawn.Worker holds --name, --env, ...,
	// the worktree choice and the command after "--".
	Spawn ralph.SpawnOptions
	// Tmux is set when --tmux was given (accepted; prints a note).
	Tmux bool
	// Heartbeat is --heartbeat, --heartbeat-expire and --heartbeat-message,
	// checked; nil without --heartbeat.
	Heartbeat *heartbeat.Config
}

// ralphSpawnExample is ralph spawn's examples, with how to watch a loop
// and step in (swarm.py's help tests look for "Monitoring:" and
// "Intervention:").
const ralphSpawnExample = `  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude --dangerously-skip-permissions
  swarm ralph spawn --name fix --prompt-file PROMPT.md --no-worktree --check 'go test ./...' -- claude
  swarm ralph spawn --name ci --prompt-file PROMPT.md --foreground --max-time 2h -- claude; echo "exit $?"
  swarm ralph spawn --name big --prompt-file PROMPT.md --max-iterations 200 --inactivity-timeout 5m -- claude

Monitoring:
  swarm ralph status builder    iteration, ETA, last screen change
  swarm ralph logs builder      iteration events (START, END, FAIL, DONE ...)
  swarm logs builder            the agent's screen (--history for scrollback)
  swarm attach builder          watch it live (detach: Ctrl-b d)

Intervention:
  swarm send builder "skip the flaky test for now"   type into the running agent
  swarm ralph pause builder     let this iteration finish, start no new one
  (edit PROMPT.md)              the next iteration reads the new text
  swarm kill builder            stop the loop and the agent for good

Rate Limit Recovery:
  swarm ralph spawn --name night --prompt-file PROMPT.md --heartbeat 4h --heartbeat-expire 24h -- claude
  types "continue" every 4 hours for a day, so an agent stopped at a usage
  limit carries on when the limit renews (see: swarm heartbeat --help)`

func newCmdRalphSpawn(f *factory, runF func(*ralphSpawnOptions) error) *cobra.Command {
	opts := &ralphSpawnOptions{IO: f.IO, Manager: f.Manager}
	var noWorktree bool
	var readySecs int
	var lf *loopFlags
	var hb heartbeat.Flags
	cmd := &cobra.Command{
		Use:   "spawn --name NAME --prompt-file FILE [flags] -- COMMAND [ARGS...]",
		Short: "Start a ralph loop (worktree on, 50 iterations, 180 s inactivity by default)",
		Long: `Start a ralph loop: a worker whose agent is restarted with a fresh context every
iteration, with the prompt file typed in (re-read from disk each time), until a
completion signal, the iteration cap, the time budget or repeated failure ends
it. A background monitor drives the loop; swarm ralph status shows it.

Completion signals: <promise>COMPLETE</promise> (exit 0), <promise>BLOCKED:why</promise>
(exit 2), <promise>DECIDE:question</promise> (exit 3), --done-pattern, --done-file,
each gated by --check commands and --require-change when given. The iteration
cap and --max-time end a loop with exit 0, or 4 ("cap reached, not complete")
when its last completion was rejected, or with --fail-on-cap.`,
		Example: ralphSpawnExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			w := &opts.Spawn.Worker
			w.Command = args
			w.Worktree = w.Worktree && !noWorktree
			opts.Spawn.Loop.ReadyTimeout.Duration = time.Duration(readySecs) * time.Second
			if w.Name == "" {
				return usagef("--name is required")
			}
			if opts.Spawn.Loop.PromptFile == "" {
				return usagef("--prompt-file is required")
			}
			if err := lf.finish(); err != nil {
				return err
			}
			if len(args) == 0 {
				return &exitError{code: exitFail, err: worker.ErrNoCommand}
			}
			if err := checkWorktreeFlags(w); err != nil {
				return err
			}
			if err := checkLifecycleFlags(cmd, args, w, &opts.Spawn.Loop); err != nil {
				return err
			}
			var err error
			if opts.Heartbeat, err = parseSpawnHeartbeat(opts.IO, hb, cmd.Flags().Changed); err != nil {
				return err
			}
			warnFlagsAfterCommand(opts.IO, cmd.Flags(), args)
			if runF != nil {
				return runF(opts)
			}
			return runRalphSpawn(opts)
		},
	}
	fs := cmd.Flags()
	fs.SetInterspersed(false)
	addWorkerSpawnFlags(fs, &opts.Spawn.Worker)
	addSpawnHeartbeatFlags(fs, &hb)
	fs.BoolVar(&opts.Spawn.Worker.Worktree, "worktree", true, "run in a git worktree on branch NAME")
	fs.BoolVar(&noWorktree, "no-worktree", false, "run in the current directory instead of a worktree")
	fs.BoolVar(&opts.Tmux, "tmux", false, "accepted for consistency with swarm spawn: ralph workers always use tmux")
	// swarm.py accepts --ready-wait; a loop always waits for the agent to
	// look ready before typing the prompt, so it changes nothing.
	fs.Bool("ready-wait", true, "accepted: the loop always waits until the agent looks ready before typing (see --ready-timeout)")
	intVar(fs, &readySecs, "ready-timeout", int(defaultReadyTimeout/time.Second), 0, noMax,
		"seconds to wait for the agent to look ready before typing the prompt")
	lf = registerLoopFlags(fs, &opts.Spawn, ralphMaxIterations, ralphInactivity)
	return cmd
}

func runRalphSpawn(opts *ralphSpawnOptions) error {
	if opts.Tmux {
		fmt.Fprintln(opts.IO.Err, "swarm: note: Ralph workers always use tmux (--tmux flag has no effect)")
	}
	return startLoop(opts.IO, opts.Manager, opts.Spawn, opts.Heartbeat)
}

// foregroundExec, when set, replaces this process with this binary
// running the arguments given, and returns only when it could not. The
// real binary sets it (main); commands run inside a test process never
// replace it.
var foregroundExec func(args []string) error

// startLoop starts a loop for spawn --ralph and ralph spawn: in the
// background (printing how to watch it), in this process (--foreground),
// or not at all (--no-run). hb, when set, is the worker's heartbeat,
// started once the worker exists and before the loop runs in the
// foreground.
func startLoop(io *IO, manager func() (*worker.Manager, error), so ralph.SpawnOptions, hb *heartbeat.Config) error {
	if so.Loop.MaxIterations > highIterations {
		io.Warn(fmt.Sprintf("high iteration count (>%d) may consume significant resources", highIterations))
	}
	if w := ralph.PromptWarning(so.Loop, so.Worker.Command); w != "" {
		io.Warn(w)
	}
	m, err := manager()
	if err != nil {
		return err
	}
	res, err := ralph.Spawn(m, so)
	if err != nil {
		return workerError(err, exitFail)
	}
	w := res.Worker
	printSpawned(io, "spawned", w, fmt.Sprintf(" [ralph mode: iteration 1/%d]", so.Loop.MaxIterations))
	printNotes(io, res.Notes)
	for _, w := range res.Warnings {
		io.Warn(w)
	}
	if err := startSpawnHeartbeat(io, m.Store.Root, w, hb); err != nil {
		return err
	}
	switch {
	case so.NoRun:
		fmt.Fprintf(io.Out, "not started (--no-run); start it with: swarm ralph run %s\n", w.Name)
		return nil
	case so.Foreground:
		if foregroundExec != nil {
			// The loop runs here for hours, and this command line, which
			// every local user can read (ps), holds the --notify URLs (a
			// webhook's token, an ntfy topic) and --env values: go on as
			// "swarm ralph run NAME", the same process in the same
			// terminal, whose command line holds none of them.
			_ = foregroundExec([]string{"ralph", "run", w.Name}) // returns only if the exec failed: the loop runs here all the same
		}
		return runEngine(io, m, w.Name)
	}
	fmt.Fprintf(io.Out, `Monitor:
  swarm ralph status %[1]s   loop progress
  swarm peek %[1]s           the agent's screen
  swarm ralph logs %[1]s     iteration events
  swarm attach %[1]s         watch it live (detach: Ctrl-b d)
  swarm kill %[1]s           stop the loop and the agent
`, w.Name)
	return nil
}

// runEngine runs a loop in this process until it ends and exits with the
// loop's code. Ctrl-C ends it as interrupted (130); SIGTERM pauses it
// after the current iteration and returns.
func runEngine(io *IO, m *worker.Manager, name string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := ralph.NewEngine(m, name, io.Out)
	eng.LogSink = logSink
	eng.Hooks = agentHooks()
	eng.Timestamps = isBackgroundMonitor() // its output is monitor.log
	if isBackgroundMonitor() {
		// It runs for hours: its RSS was mostly start-up's, and a heap
		// grown to the collector's default goal.
		eng.Trim = memtrim.Trim
		memtrim.KeepHeapSmall()
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			if s == os.Interrupt {
				cancel()
			} else {
				eng.RequestPause()
			}
		}
	}()
	code, err := eng.Run(ctx)
	// The loop's last notifications are being delivered: give them time.
	ralph.WaitNotifications(notify.Drain)
	if err != nil {
		return &exitError{code: code, err: err}
	}
	if code != exitOK {
		return exitCode(code)
	}
	return nil
}
