package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

type cleanOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name  string // "" with All
	All   bool
	Clean worker.CleanOptions // --rm-worktree (default) / --no-rm-worktree, --force-dirty
}

func newCmdClean(f *factory, runF func(*cleanOptions) error) *cobra.Command {
	opts := &cleanOptions{IO: f.IO, Manager: f.Manager}
	var noRmWorktree bool
	cmd := &cobra.Command{
		Use:   "clean [NAME]",
		Short: "Remove stopped workers' records, logs and clean worktrees",
		Example: `  swarm clean fixer
  swarm clean --all --no-rm-worktree`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Name, err = nameOrAll(args, opts.All); err != nil {
				return err
			}
			opts.Clean.RmWorktree = opts.Clean.RmWorktree && !noRmWorktree
			if runF != nil {
				return runF(opts)
			}
			return runClean(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "clean every stopped worker")
	cmd.Flags().BoolVar(&opts.Clean.RmWorktree, "rm-worktree", true, "remove the worker's worktree")
	cmd.Flags().BoolVar(&noRmWorktree, "no-rm-worktree", false, "keep the worktree")
	cmd.Flags().BoolVar(&opts.Clean.ForceDirty, "force-dirty", false, "remove worktrees even with uncommitted changes")
	return cmd
}

func runClean(opts *cleanOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.All {
		cleaned, kept, err := m.CleanAll(opts.Clean)
		for _, n := range cleaned {
			printKept(opts.IO, n, kept[n])
			fmt.Fprintf(opts.IO.Out, "cleaned %s\n", n)
		}
		return workerError(err, exitFail)
	}
	kept, err := m.Clean(opts.Name, opts.Clean)
	if err != nil {
		return workerError(err, exitFail)
	}
	printKept(opts.IO, opts.Name, kept)
	fmt.Fprintf(opts.IO.Out, "cleaned %s\n", opts.Name)
	return nil
}

// printKept says where a worktree that clean kept is, what work it holds,
// and how to remove it once that work is saved (the record is gone, so
// swarm cannot).
func printKept(io *IO, name string, k *worker.KeptWorktree) {
	if k == nil {
		return
	}
	var dirty *worktree.DirtyError
	if !errors.As(k.Why, &dirty) {
		fmt.Fprintf(io.Out, "kept worktree of %s, which could not be removed: %s\n", name, k.Path)
	} else {
		fmt.Fprintf(io.Out, "kept worktree of %s with %s: %s\n", name, dirty.Holds(), k.Path)
		if dirty.Unsaved > 0 {
			fmt.Fprintf(io.Out, "  keep its commits on a branch with: git -C %s branch NEW-BRANCH HEAD\n", tmux.ShellQuote(k.Path))
		}
	}
	fmt.Fprintf(io.Out, "  remove it (losing that work) with: git -C %s worktree remove --force %s\n",
		tmux.ShellQuote(k.BaseRepo), tmux.ShellQuote(k.Path))
}
