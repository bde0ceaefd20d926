package main

import (
	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type attachOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
}

func newCmdAttach(f *factory, runF func(*attachOptions) error) *cobra.Command {
	opts := &attachOptions{IO: f.IO, Manager: f.Manager}
	return &cobra.Command{
		Use:     "attach NAME",
		Short:   "Attach your terminal to a worker's tmux window (detach: prefix + d)",
		Example: `  swarm attach fixer`,
		Args:    argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runAttach(opts)
		},
	}
}

func runAttach(opts *attachOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	return workerError(m.Attach(opts.Name), exitFail)
}
