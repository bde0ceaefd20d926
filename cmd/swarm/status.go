package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

type statusOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string
}

func newCmdStatus(f *factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{IO: f.IO, Manager: f.Manager}
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show whether a worker runs (exit 0 running, 1 stopped, 2 not found)",
		Example: `  swarm status api && echo up
  swarm status api; echo $?   # 0 running, 1 stopped, 2 unknown`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runStatus(opts)
		},
	}
}

func runStatus(opts *statusOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	l, err := m.Status(opts.Name)
	if err != nil {
		return workerError(err, exitNotFound)
	}
	var parts []string
	if l.Tmux != nil {
		parts = append(parts, fmt.Sprintf("tmux window %s:%s", l.Tmux.Session, l.Tmux.Window))
	} else if l.PID != nil {
		parts = append(parts, fmt.Sprintf("pid %d", *l.PID))
	}
	if l.Worktree != nil {
		parts = append(parts, "worktree "+l.Worktree.Path)
	}
	parts = append(parts, runTime(l))
	if code, ok := exitOf(*l); ok {
		parts = append(parts, fmt.Sprintf("exit %d", code))
	}
	if l.Lost || (l.IsRalph() && restore.LoopLost(m, opts.Name)) {
		// As ls marks it (stopped(lost)): a reboot or a killed tmux
		// server took it.
		parts = append(parts, "lost: swarm restore "+opts.Name)
	}
	fmt.Fprintf(opts.IO.Out, "%s: %s\n", opts.Name, termtext.Line(fmt.Sprintf("%s (%s)", l.Status, strings.Join(parts, ", "))))
	if !l.Running() {
		return exitCode(exitFail)
	}
	return nil
}

// runTime is how long the worker has been up ("uptime 5m", swarm.py's),
// or for a stopped worker whose end is known, how long it ran ("ran 5m"):
// a time that stops growing when the worker does.
func runTime(l *worker.Live) string {
	if l.Running() || l.Ended.IsZero() || l.Started.IsZero() {
		return "uptime " + age(l.Started)
	}
	return "ran " + duration.Age(l.Ended.Sub(l.Started.Time))
}
