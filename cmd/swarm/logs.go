package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type logsOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name   string
	Logs   worker.LogsOptions // --history, --lines
	Follow bool
}

func newCmdLogs(f *factory, runF func(*logsOptions) error) *cobra.Command {
	opts := &logsOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a worker's output (its tmux pane, or its stdout log)",
		Example: `  swarm logs fixer --history
  swarm logs api -f`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runLogs(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Logs.History, "history", false, "include tmux scrollback")
	intVar(cmd.Flags(), &opts.Logs.Lines, "lines", defaultLogsLines, 1, noMax, "at most this many lines")
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new output until Ctrl-C or the worker stops")
	return cmd
}

func runLogs(opts *logsOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.Follow {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return workerError(loopWindowHint(m, opts.Name, m.Follow(ctx, opts.Name, opts.IO.Out)), exitFail)
	}
	text, err := m.Logs(opts.Name, opts.Logs)
	if err != nil {
		return workerError(loopWindowHint(m, opts.Name, err), exitFail)
	}
	fmt.Fprint(opts.IO.Out, text)
	return nil
}
