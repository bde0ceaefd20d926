package main

import (
	"fmt"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/hint"
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
	terminal := func() error {
		if isTerminal(opts.IO.In) {
			return nil
		}
		// tmux would say only "open terminal failed: not a terminal".
		return hint.Errorf(
			fmt.Sprintf("run it in a terminal; from a script, read the screen with: swarm peek %s, or follow it with: swarm logs %s -f", opts.Name, opts.Name),
			"swarm attach needs a terminal (standard input is not one)")
	}
	return workerError(m.Attach(opts.Name, terminal), exitFail)
}

// isTerminal reports whether r is a terminal device.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(f.Fd())
}
