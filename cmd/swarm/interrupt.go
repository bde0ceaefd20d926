package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type interruptOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string // "" with All
	All  bool
}

func newCmdInterrupt(f *factory, runF func(*interruptOptions) error) *cobra.Command {
	opts := &interruptOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "interrupt [NAME]",
		Short: "Send Ctrl-C to a worker",
		Example: `  swarm interrupt fixer
  swarm interrupt --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: nameOrAllRunE(&opts.Name, &opts.All, opts, runF, runInterrupt),
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every running tmux worker")
	return cmd
}

func runInterrupt(opts *interruptOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if !opts.All {
		if err := m.Interrupt(opts.Name); err != nil {
			return workerError(err, exitFail)
		}
		fmt.Fprintf(opts.IO.Out, "interrupted %s\n", opts.Name)
		return nil
	}
	names, err := runningTmux(m)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	for _, n := range names {
		// A worker that stopped meanwhile is not an error of --all.
		if err := m.Interrupt(n); err == nil {
			fmt.Fprintf(opts.IO.Out, "interrupted %s\n", n)
		}
	}
	return nil
}

type eofOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
}

func newCmdEOF(f *factory, runF func(*eofOptions) error) *cobra.Command {
	opts := &eofOptions{IO: f.IO, Manager: f.Manager}
	return &cobra.Command{
		Use:     "eof NAME",
		Short:   "Send Ctrl-D (end of input) to a worker",
		Example: `  swarm eof repl`,
		Args:    argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runEOF(opts)
		},
	}
}

func runEOF(opts *eofOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if err := m.EOF(opts.Name); err != nil {
		return workerError(err, exitFail)
	}
	fmt.Fprintf(opts.IO.Out, "sent eof to %s\n", opts.Name)
	return nil
}
