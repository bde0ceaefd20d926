package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type waitOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name    string // "" with All
	All     bool
	Timeout time.Duration // 0: never
}

func newCmdWait(f *factory, runF func(*waitOptions) error) *cobra.Command {
	opts := &waitOptions{IO: f.IO, Manager: f.Manager}
	var secs int
	cmd := &cobra.Command{
		Use:   "wait [NAME]",
		Short: "Wait until workers stop (exit 1 on timeout)",
		Example: `  swarm wait build --timeout 600
  swarm wait --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Name, err = nameOrAll(args, opts.All); err != nil {
				return err
			}
			opts.Timeout = time.Duration(secs) * time.Second
			if runF != nil {
				return runF(opts)
			}
			return runWait(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "wait for every running worker")
	intVar(cmd.Flags(), &secs, "timeout", 0, 0, noMax, "give up after this many seconds (0: never)")
	return cmd
}

func runWait(opts *waitOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	names := []string{opts.Name}
	if opts.All {
		if names, err = runningNames(m); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	left, err := m.Wait(ctx, names, opts.Timeout, func(n string) {
		fmt.Fprintf(opts.IO.Out, "%s: exited\n", n)
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitCode(exitInterrupted)
		}
		return workerError(err, exitFail)
	}
	for _, n := range left {
		fmt.Fprintf(opts.IO.Out, "%s: still running (timeout)\n", n)
	}
	if len(left) > 0 {
		return exitCode(exitFail)
	}
	return nil
}

// runningNames lists the workers that run now.
func runningNames(m *worker.Manager) ([]string, error) {
	live, err := m.List()
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	var names []string
	for _, l := range live {
		if l.Running() {
			names = append(names, l.Name)
		}
	}
	return names, nil
}
