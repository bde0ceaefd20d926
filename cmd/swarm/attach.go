package main

import "github.com/spf13/cobra"

func newAttachCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "attach NAME",
		Short:   "Attach your terminal to a worker's tmux window (detach: prefix + d)",
		Example: `  swarm attach fixer`,
		Args:    argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return workerError(e.manager().Attach(args[0]), 1)
		},
	}
}
