package main

import (
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/proc"
)

// logPipeCommand is the hidden command that caps an agent's or a process
// worker's output (tmux pipe-pane and process workers' stdout/stderr feed
// it): "swarm _logpipe --max N PATH".
const logPipeCommand = "_logpipe"

// logSink is the argv prefix of the capping sink: this very binary.
func logSink(max int64) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, logPipeCommand, "--max", strconv.FormatInt(max, 10)}
}

type logPipeOptions struct {
	IO   *IO
	Max  int64
	Path string
}

func newCmdLogPipe(f *factory, runF func(*logPipeOptions) error) *cobra.Command {
	opts := &logPipeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:    logPipeCommand + " --max BYTES PATH",
		Short:  "Copy standard input into PATH, keeping its size under --max (internal)",
		Hidden: true,
		Args:   argsRange(1, 1, "one file path"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runLogPipe(opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Max, "max", logcap.DefaultMax, "the most bytes the file keeps (head and tail)")
	return cmd
}

// runLogPipe copies the input into the capped log. Reading a pipe, it
// first makes sure the writer (a worker, tmux) never finds the pipe
// without a reader: it ignores stop signals and keeps a standby that
// takes its place if it dies (proc.GuardSink).
func runLogPipe(opts *logPipeOptions) error {
	done := make(chan struct{})
	defer close(done)
	if in, ok := opts.IO.In.(*os.File); ok {
		if self := logSink(opts.Max); self != nil && !proc.GuardSink(in, append(self, opts.Path), done) {
			return nil // a standby that took over after the end
		}
	}
	if err := logcap.Pipe(opts.IO.In, opts.Path, opts.Max); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}
