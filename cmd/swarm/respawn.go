package main

import (
	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

func newRespawnCmd(e *env) *cobra.Command {
	o := worker.RespawnOptions{}
	cmd := &cobra.Command{
		Use:   "respawn NAME",
		Short: "Restart a worker with the same command, env, tags, directory and worktree",
		Example: `  swarm respawn api
  swarm respawn fixer --clean-first`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := e.manager().Respawn(args[0], o)
			if err != nil {
				return workerError(err, 1)
			}
			w := res.Worker
			if w.Tmux != nil {
				cmd.Printf("respawned %s (tmux: %s:%s)\n", w.Name, w.Tmux.Session, w.Tmux.Window)
			} else if w.PID != nil {
				cmd.Printf("respawned %s (pid: %d)\n", w.Name, *w.PID)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.CleanFirst, "clean-first", false, "remove the worktree first and start from a fresh one")
	cmd.Flags().BoolVar(&o.ForceDirty, "force-dirty", false, "with --clean-first, discard uncommitted changes")
	return cmd
}
