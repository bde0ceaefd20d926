package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
)

type waitOptions struct {
	all     bool
	timeout int
}

func newWaitCmd(e *env) *cobra.Command {
	o := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait [NAME]",
		Short: "Wait until workers stop (exit 1 on timeout)",
		Example: `  swarm wait build --timeout 600
  swarm wait --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: func(cmd *cobra.Command, args []string) error { return runWait(e, o, args) },
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "wait for every running worker")
	cmd.Flags().IntVar(&o.timeout, "timeout", 0, "give up after this many seconds (0: never)")
	return cmd
}

func runWait(e *env, o *waitOptions, args []string) error {
	if o.timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	m := e.manager()
	var names []string
	switch {
	case o.all && len(args) > 0:
		return usagef("give a worker name or --all, not both")
	case o.all:
		live, err := m.List()
		if err != nil {
			return fail(1, "%v", err)
		}
		for _, l := range live {
			if l.Running() {
				names = append(names, l.Name)
			}
		}
	case len(args) == 1:
		names = args
	default:
		return usagef("give a worker name or --all (see: swarm wait --help)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	left, err := m.Wait(ctx, names, time.Duration(o.timeout)*time.Second, func(n string) {
		fmt.Fprintf(e.io.Out, "%s: exited\n", n)
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitCode(130)
		}
		return workerError(err, 1)
	}
	for _, n := range left {
		fmt.Fprintf(e.io.Out, "%s: still running (timeout)\n", n)
	}
	if len(left) > 0 {
		return exitCode(1)
	}
	return nil
}
