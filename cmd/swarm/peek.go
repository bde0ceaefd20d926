package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/worker"
)

type peekOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name  string // "" with All
	All   bool
	Lines int
}

func newCmdPeek(f *factory, runF func(*peekOptions) error) *cobra.Command {
	opts := &peekOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "peek [NAME]",
		Short: "Print the last lines of a worker's screen",
		Example: `  swarm peek fixer
  swarm peek fixer -n 100
  swarm peek --all`,
		Args: argsRange(0, 1, "a worker name, or --all"),
		RunE: nameOrAllRunE(&opts.Name, &opts.All, opts, runF, runPeek),
	}
	intVarP(cmd.Flags(), &opts.Lines, "lines", "n", defaultPeekLines, 1, noMax, "number of lines")
	cmd.Flags().BoolVar(&opts.All, "all", false, "every running tmux worker")
	return cmd
}

func runPeek(opts *peekOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if opts.All {
		results, err := m.PeekAll(opts.Lines)
		if err != nil {
			return &exitError{code: exitFail, err: err}
		}
		for _, r := range results {
			fmt.Fprintf(opts.IO.Out, "=== %s ===\n%s", r.Name, r.Text)
		}
		return nil
	}
	text, err := m.Peek(opts.Name, opts.Lines)
	if err != nil {
		err = loopWindowHint(m, opts.Name, err)
		// docs/commands.md: peek of an unknown worker exits 2, as status.
		return workerError(err, exitNotFound)
	}
	fmt.Fprint(opts.IO.Out, text)
	return nil
}

// loopWindowHint gives a worker-has-no-window error (peek, logs) of a
// loop's worker the loop's own way on: its window is gone once the loop
// ended, and swarm respawn would start the agent without its loop.
func loopWindowHint(m *worker.Manager, name string, err error) error {
	if !errors.Is(err, worker.ErrNotRunning) {
		return err
	}
	cause := err
	if h := (*hint.Error)(nil); errors.As(err, &h) {
		cause = h.Err
	}
	if restore.LoopLost(m, name) {
		return hint.Wrap(cause, "its ralph loop was lost (a reboot, a killed tmux server): swarm restore %s", name)
	}
	if fix, ok := ralph.NoWindowHint(m, name); ok {
		return hint.Wrap(cause, "%s", fix)
	}
	return err
}
