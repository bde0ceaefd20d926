package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type killOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string // "" with All
	All  bool
	Kill worker.KillOptions // --rm-worktree, --force-dirty
}

func newCmdKill(f *factory, runF func(*killOptions) error) *cobra.Command {
	opts := &killOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "kill [NAME]",
		Short: "Stop a worker (and its ralph loop, for good)",
		Long: `Stop a worker: SIGTERM to its whole process group, SIGKILL after 5 s, then its
tmux window is removed. A ralph loop on the worker stops for good. The record
stays (stopped) until swarm clean. With --rm-worktree, a worktree that holds
work (uncommitted changes, git-ignored files, commits on no branch, a rebase
in progress) is kept unless --force-dirty.`,
		Example: `  swarm kill fixer
  swarm kill fixer --rm-worktree
  swarm kill --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: nameOrAllRunE(&opts.Name, &opts.All, opts, runF, runKill),
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "kill every running worker")
	cmd.Flags().BoolVar(&opts.Kill.RmWorktree, "rm-worktree", false, "also remove the worker's worktree")
	cmd.Flags().BoolVar(&opts.Kill.ForceDirty, "force-dirty", false, "remove the worktree even with uncommitted changes")
	return cmd
}

func runKill(opts *killOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.All {
		killed, err := m.KillAll(opts.Kill)
		for _, n := range killed {
			fmt.Fprintf(opts.IO.Out, "killed %s\n", n)
		}
		return workerError(err, exitFail)
	}
	if err := m.Kill(opts.Name, opts.Kill); err != nil {
		return workerError(err, exitFail)
	}
	fmt.Fprintf(opts.IO.Out, "killed %s\n", opts.Name)
	return nil
}
