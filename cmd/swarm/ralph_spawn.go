package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/worker"
)

type ralphSpawnOptions struct {
	worker       worker.SpawnOptions
	loop         loopFlags
	noWorktree   bool
	tmux         bool
	readyTimeout int
}

func newRalphSpawnCmd(e *env) *cobra.Command {
	o := &ralphSpawnOptions{}
	cmd := &cobra.Command{
		Use:   "spawn --name NAME --prompt-file FILE [flags] -- COMMAND [ARGS...]",
		Short: "Start a ralph loop (worktree on, 50 iterations, 180 s inactivity by default)",
		Long: `Start a ralph loop: a worker whose agent is restarted with a fresh context every
iteration, with the prompt file typed in (re-read from disk each time), until a
completion signal, the iteration cap, the time budget or repeated failure ends
it. A background monitor drives the loop; swarm ralph status shows it.

Completion signals: <promise>COMPLETE</promise> (exit 0), <promise>BLOCKED:why</promise>
(exit 2), <promise>DECIDE:question</promise> (exit 3), --done-pattern, --done-file,
each gated by --check commands and --require-change when given.`,
		Example: `  swarm ralph spawn --name builder --prompt-file PROMPT.md -- claude --dangerously-skip-permissions
  swarm ralph spawn --name fix --prompt-file PROMPT.md --no-worktree --check 'go test ./...' -- claude
  swarm ralph spawn --name ci --prompt-file PROMPT.md --foreground --max-time 2h -- claude; echo "exit $?"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.worker.Command = args
			if o.tmux {
				fmt.Fprintln(e.io.Err, "swarm: note: Ralph workers always use tmux (--tmux flag has no effect)")
			}
			if o.worker.Name == "" {
				return usagef("--name is required (see: swarm ralph spawn --help)")
			}
			if o.loop.promptFile == "" {
				return usagef("--prompt-file is required (see: swarm ralph spawn --help)")
			}
			o.worker.Worktree = !o.noWorktree
			return runRalphSpawn(e, o.worker, &o.loop, o.readyTimeout)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	addWorkerSpawnFlags(f, &o.worker)
	f.BoolVar(&o.worker.Worktree, "worktree", true, "run in a git worktree on branch NAME (default)")
	f.BoolVar(&o.noWorktree, "no-worktree", false, "run in the current directory instead of a worktree")
	f.BoolVar(&o.tmux, "tmux", false, "accepted for compatibility: ralph workers always use tmux")
	f.IntVar(&o.readyTimeout, "ready-timeout", 120, "seconds to wait for the agent to look ready before typing the prompt")
	o.loop.register(f, 50, "180")
	return cmd
}

// runRalphSpawn starts a loop for spawn --ralph and ralph spawn.
func runRalphSpawn(e *env, wo worker.SpawnOptions, lf *loopFlags, readyTimeout int) error {
	opts, err := lf.options()
	if err != nil {
		return fail(1, "%v", err)
	}
	opts.ReadyTimeout = time.Duration(readyTimeout) * time.Second
	if opts.MaxIterations > 50 {
		e.io.Warn("high iteration count (>50) may consume significant resources")
	}
	m := e.manager()
	res, err := ralph.Spawn(m, ralph.SpawnOptions{
		Worker: wo, Loop: opts, Foreground: lf.foreground, NoRun: lf.noRun,
		Replace: lf.replace, CleanState: lf.cleanState, ForceDirty: lf.forceDirty,
	})
	if err != nil {
		return workerError(err, 1)
	}
	w := res.Worker
	fmt.Fprintf(e.io.Out, "spawned %s (tmux: %s:%s) [ralph mode: iteration 1/%d]\n", w.Name, w.Tmux.Session, w.Tmux.Window, opts.MaxIterations)
	switch {
	case lf.noRun:
		fmt.Fprintf(e.io.Out, "not started (--no-run); start it with: swarm ralph run %s\n", w.Name)
		return nil
	case lf.foreground:
		return runEngine(e, m, w.Name)
	}
	fmt.Fprintf(e.io.Out, `Monitor:
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
func runEngine(e *env, m *worker.Manager, name string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := ralph.NewEngine(m, name, e.io.Out)
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
	if err != nil {
		return fail(code, "%v", err)
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}
