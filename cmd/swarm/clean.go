package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type cleanOptions struct {
	all          bool
	noRmWorktree bool
	opts         worker.CleanOptions
}

func newCleanCmd(e *env) *cobra.Command {
	o := &cleanOptions{}
	cmd := &cobra.Command{
		Use:   "clean [NAME]",
		Short: "Remove stopped workers' records, logs and clean worktrees",
		Example: `  swarm clean fixer
  swarm clean --all --no-rm-worktree`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error { return runClean(e, o, args) },
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "clean every stopped worker")
	cmd.Flags().BoolVar(&o.opts.RmWorktree, "rm-worktree", true, "remove the worker's worktree (default)")
	cmd.Flags().BoolVar(&o.noRmWorktree, "no-rm-worktree", false, "keep the worktree")
	cmd.Flags().BoolVar(&o.opts.ForceDirty, "force-dirty", false, "remove worktrees even with uncommitted changes")
	return cmd
}

func runClean(e *env, o *cleanOptions, args []string) error {
	if o.noRmWorktree {
		o.opts.RmWorktree = false
	}
	m := e.manager()
	if o.all {
		if len(args) > 0 {
			return usagef("give a worker name or --all, not both")
		}
		cleaned, kept, err := m.CleanAll(o.opts)
		for _, n := range cleaned {
			printKept(e, n, kept[n])
			fmt.Fprintf(e.io.Out, "cleaned %s\n", n)
		}
		return workerError(err, 1)
	}
	if len(args) == 0 {
		return usagef("give a worker name or --all (see: swarm clean --help)")
	}
	kept, err := m.Clean(args[0], o.opts)
	if err != nil {
		return workerError(err, 1)
	}
	printKept(e, args[0], kept)
	fmt.Fprintf(e.io.Out, "cleaned %s\n", args[0])
	return nil
}

func printKept(e *env, name, path string) {
	if path != "" {
		fmt.Fprintf(e.io.Out, "kept worktree of %s with uncommitted changes: %s\n", name, path)
	}
}
