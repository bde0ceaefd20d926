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
	history bool
	lines   int
	follow  bool
}

func newLogsCmd(e *env) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a worker's output (its tmux pane, or its stdout log)",
		Example: `  swarm logs fixer --history
  swarm logs api -f`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(e, o, args[0]) },
	}
	cmd.Flags().BoolVar(&o.history, "history", false, "include tmux scrollback")
	cmd.Flags().IntVar(&o.lines, "lines", 1000, "at most this many lines")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing new output until Ctrl-C or the worker stops")
	return cmd
}

func runLogs(e *env, o *logsOptions, name string) error {
	m := e.manager()
	if o.follow {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return workerError(m.Follow(ctx, name, e.io.Out), 1)
	}
	text, err := m.Logs(name, worker.LogsOptions{History: o.history, Lines: o.lines})
	if err != nil {
		return workerError(err, 1)
	}
	fmt.Fprint(e.io.Out, text)
	return nil
}
