package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

// superviseCommand is the hidden command that starts a process worker and
// records how it ended: "swarm _supervise --exit-file F -- PATH ARGV...".
// spawn starts it detached; it is not for people.
const superviseCommand = "_supervise"

// supervisor is the argv prefix of a process worker's supervisor, which
// records the end in exitFile: this very binary, or nil (no exit codes)
// when its path is unknown.
func supervisor(exitFile string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, superviseCommand, "--exit-file", exitFile, "--"}
}

type superviseOptions struct {
	ExitFile string
	Path     string   // the command's resolved path
	Argv     []string // its argv, argv[0] included
}

func newCmdSupervise(f *factory, runF func(*superviseOptions) error) *cobra.Command {
	opts := &superviseOptions{}
	cmd := &cobra.Command{
		Use:    superviseCommand + " --exit-file FILE -- PATH ARGV...",
		Short:  "Run a process worker's command and record how it ended (internal)",
		Hidden: true,
		Args:   argsRange(2, -1, "the command's path and argv"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.Argv = args[0], args[1:]
			if runF != nil {
				return runF(opts)
			}
			// Nothing is printed: standard output and error are the
			// worker's logs. Spawn hears of a failure to start through
			// the report pipe.
			if err := worker.Supervise(opts.ExitFile, opts.Path, opts.Argv); err != nil {
				return exitCode(exitFail)
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&opts.ExitFile, "exit-file", "", "where to record the exit")
	return cmd
}
