package main

import (
	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type respawnOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name    string
	Respawn worker.RespawnOptions // --clean-first, --force-dirty
}

func newCmdRespawn(f *factory, runF func(*respawnOptions) error) *cobra.Command {
	opts := &respawnOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "respawn NAME",
		Short: "Restart a worker with the same command, env, tags, directory and worktree",
		Example: `  swarm respawn api
  swarm respawn fixer --clean-first`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runRespawn(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Respawn.CleanFirst, "clean-first", false, "remove the worktree first and start from a fresh one")
	cmd.Flags().BoolVar(&opts.Respawn.ForceDirty, "force-dirty", false, "with --clean-first, discard uncommitted changes")
	return cmd
}

func runRespawn(opts *respawnOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	res, err := m.Respawn(opts.Name, opts.Respawn)
	if err != nil {
		return workerError(err, exitFail)
	}
	printSpawned(opts.IO, "respawned", res.Worker, "")
	return nil
}
