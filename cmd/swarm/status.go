package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newStatusCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show whether a worker runs (exit 0 running, 1 stopped, 2 not found)",
		Example: `  swarm status api && echo up
  swarm status api; echo $?   # 0 running, 1 stopped, 2 unknown`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error { return runStatus(e, args[0]) },
	}
}

func runStatus(e *env, name string) error {
	l, err := e.manager().Status(name)
	if err != nil {
		return workerError(err, 2)
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
	parts = append(parts, "uptime "+age(l.Started))
	fmt.Fprintf(e.io.Out, "%s: %s (%s)\n", name, l.Status, strings.Join(parts, ", "))
	if !l.Running() {
		return exitCode(1)
	}
	return nil
}
