package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newInterruptCmd(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "interrupt [NAME]",
		Short: "Send Ctrl-C to a worker",
		Example: `  swarm interrupt fixer
  swarm interrupt --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m := e.manager()
			if all {
				if len(args) > 0 {
					return usagef("give a worker name or --all, not both")
				}
				names, err := runningTmux(m)
				if err != nil {
					return fail(1, "%v", err)
				}
				for _, n := range names {
					if err := m.Interrupt(n); err == nil {
						fmt.Fprintf(e.io.Out, "interrupted %s\n", n)
					}
				}
				return nil
			}
			if len(args) == 0 {
				return usagef("give a worker name or --all (see: swarm interrupt --help)")
			}
			if err := m.Interrupt(args[0]); err != nil {
				return workerError(err, 1)
			}
			fmt.Fprintf(e.io.Out, "interrupted %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every running tmux worker")
	return cmd
}

func newEOFCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "eof NAME",
		Short:   "Send Ctrl-D (end of input) to a worker",
		Example: `  swarm eof repl`,
		Args:    argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := e.manager().EOF(args[0]); err != nil {
				return workerError(err, 1)
			}
			fmt.Fprintf(e.io.Out, "sent eof to %s\n", args[0])
			return nil
		},
	}
}
