package main

import (
	"fmt"
	"github.com/spf13/pflag"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type spawnOptions struct {
	worker       worker.SpawnOptions
	readyTimeout int
	ralph        bool
	loop         loopFlags
}

func newSpawnCmd(e *env) *cobra.Command {
	o := &spawnOptions{}
	cmd := &cobra.Command{
		Use:   "spawn --name NAME [flags] -- COMMAND [ARGS...]",
		Short: "Start a worker",
		Long: `Start a worker running COMMAND, in a tmux window (--tmux) or as a background
process whose output goes to $SWARM_HOME/logs/NAME.stdout.log.`,
		Example: `  swarm spawn --name api --tmux -- npm run dev
  swarm spawn --name agent --ralph --prompt-file PROMPT.md --max-iterations 10 -- claude
  swarm spawn --name fixer --tmux --worktree --ready-wait -- claude
  swarm spawn --name job --env 'TOKEN=a b' --tag batch -- ./run.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.worker.Command = args
			return runSpawn(e, o)
		},
	}
	f := cmd.Flags()
	// Everything after the command's first word belongs to the command.
	f.SetInterspersed(false)
	addWorkerSpawnFlags(f, &o.worker)
	f.BoolVar(&o.worker.Tmux, "tmux", false, "run in a tmux window")
	f.BoolVar(&o.worker.Worktree, "worktree", false, "run in a new git worktree on branch NAME")
	f.BoolVar(&o.worker.ReadyWait, "ready-wait", false, "wait until the agent looks ready for input")
	f.IntVar(&o.readyTimeout, "ready-timeout", 120, "seconds --ready-wait waits (and a ralph loop waits before typing)")
	f.BoolVar(&o.ralph, "ralph", false, "run a ralph loop (needs --prompt-file and --max-iterations; implies --tmux)")
	o.loop.register(f, 0, "60")
	return cmd
}

// addWorkerSpawnFlags registers the flags spawn and ralph spawn share.
func addWorkerSpawnFlags(f *pflag.FlagSet, w *worker.SpawnOptions) {
	f.StringVar(&w.Name, "name", "", "worker name (letters, digits, '.', '_', '-'; max 64)")
	f.StringVar(&w.Session, "session", "", "tmux session (default swarm-<hash of state root>)")
	f.StringVar(&w.Socket, "tmux-socket", os.Getenv("SWARM_TMUX_SOCKET"), "tmux socket name (tmux -L; default $SWARM_TMUX_SOCKET)")
	f.StringVar(&w.Branch, "branch", "", "worktree branch (default: the name)")
	f.StringVar(&w.WorktreeDir, "worktree-dir", "", "directory to create worktrees in (default <repo>-worktrees)")
	f.StringArrayVar(&w.Tags, "tag", nil, "tag the worker (repeatable)")
	f.StringArrayVar(&w.Env, "env", nil, "set KEY=VAL in the command's environment (repeatable)")
	f.StringVar(&w.Cwd, "cwd", "", "working directory (default: current)")
}

func runSpawn(e *env, o *spawnOptions) error {
	if o.worker.Name == "" {
		return usagef("--name is required (see: swarm spawn --help)")
	}
	if o.ralph {
		if o.loop.promptFile == "" {
			return fail(1, "--ralph requires --prompt-file")
		}
		if o.loop.maxIterations <= 0 {
			return fail(1, "--ralph requires --max-iterations")
		}
		if len(o.worker.Command) == 0 {
			return fail(1, "no command provided (use -- command...)")
		}
		return runRalphSpawn(e, o.worker, &o.loop, o.readyTimeout)
	}
	if len(o.worker.Command) == 0 {
		return fail(1, "no command provided (use -- command...)")
	}
	if o.readyTimeout < 0 {
		return fail(1, "--ready-timeout must not be negative")
	}
	o.worker.ReadyTimeout = time.Duration(o.readyTimeout) * time.Second
	m := e.manager()
	res, err := m.Spawn(o.worker)
	if err != nil {
		return fail(1, "%v", err)
	}
	printSpawned(e, res.Worker.Name, res, "")
	if res.NotReady {
		e.io.Warn(fmt.Sprintf("agent '%s' did not become ready within %ds", o.worker.Name, o.readyTimeout))
	}
	return nil
}

func printSpawned(e *env, name string, res *worker.SpawnResult, suffix string) {
	w := res.Worker
	if w.Tmux != nil {
		fmt.Fprintf(e.io.Out, "spawned %s (tmux: %s:%s)%s\n", name, w.Tmux.Session, w.Tmux.Window, suffix)
	} else if w.PID != nil {
		fmt.Fprintf(e.io.Out, "spawned %s (pid: %d)%s\n", name, *w.PID, suffix)
	} else {
		fmt.Fprintf(e.io.Out, "spawned %s%s\n", name, suffix)
	}
}
