package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

type peekOptions struct {
	lines int
	all   bool
}

func newPeekCmd(e *env) *cobra.Command {
	o := &peekOptions{}
	cmd := &cobra.Command{
		Use:   "peek [NAME]",
		Short: "Print the last lines of a worker's screen",
		Example: `  swarm peek fixer
  swarm peek fixer -n 100
  swarm peek --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error { return runPeek(e, o, args) },
	}
	cmd.Flags().IntVarP(&o.lines, "lines", "n", 30, "number of lines")
	cmd.Flags().BoolVar(&o.all, "all", false, "every running tmux worker")
	return cmd
}

func runPeek(e *env, o *peekOptions, args []string) error {
	if o.lines <= 0 {
		return usagef("-n must be a positive number of lines")
	}
	m := e.manager()
	if o.all {
		if len(args) > 0 {
			return usagef("give a worker name or --all, not both")
		}
		results, err := m.PeekAll(o.lines)
		if err != nil {
			return fail(1, "%v", err)
		}
		for _, r := range results {
			fmt.Fprintf(e.io.Out, "=== %s ===\n%s", r.Name, r.Text)
		}
		return nil
	}
	if len(args) == 0 {
		return usagef("give a worker name or --all (see: swarm peek --help)")
	}
	text, err := m.Peek(args[0], o.lines)
	if err != nil {
		return workerError(err, 2)
	}
	fmt.Fprint(e.io.Out, text)
	return nil
}
