package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type killOptions struct {
	all  bool
	opts worker.KillOptions
}

func newKillCmd(e *env) *cobra.Command {
	o := &killOptions{}
	cmd := &cobra.Command{
		Use:   "kill [NAME]",
		Short: "Stop a worker (and its ralph loop, for good)",
		Long: `Stop a worker: SIGTERM to its whole process group, SIGKILL after 5 s, then its
tmux window is removed. A ralph loop on the worker stops for good. The record
stays (stopped) until swarm clean. A worktree with uncommitted changes is kept
unless --force-dirty.`,
		Example: `  swarm kill fixer
  swarm kill fixer --rm-worktree
  swarm kill --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error { return runKill(e, o, args) },
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "kill every running worker")
	cmd.Flags().BoolVar(&o.opts.RmWorktree, "rm-worktree", false, "also remove the worker's worktree")
	cmd.Flags().BoolVar(&o.opts.ForceDirty, "force-dirty", false, "remove the worktree even with uncommitted changes")
	return cmd
}

func runKill(e *env, o *killOptions, args []string) error {
	m := e.manager()
	if o.all {
		if len(args) > 0 {
			return usagef("give a worker name or --all, not both")
		}
		killed, err := m.KillAll(o.opts)
		for _, n := range killed {
			fmt.Fprintf(e.io.Out, "killed %s\n", n)
		}
		return workerError(err, 1)
	}
	if len(args) == 0 {
		return usagef("give a worker name or --all (see: swarm kill --help)")
	}
	if err := m.Kill(args[0], o.opts); err != nil {
		return workerError(err, 1)
	}
	fmt.Fprintf(e.io.Out, "killed %s\n", args[0])
	return nil
}
