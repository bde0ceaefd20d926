package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type sendOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name string // "" with All
	All  bool
	Text string
	Send worker.SendOptions // --no-enter, --raw
}

func newCmdSend(f *factory, runF func(*sendOptions) error) *cobra.Command {
	opts := &sendOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "send [NAME] TEXT",
		Short: "Type text into a worker, then press Enter",
		Long: `Type TEXT into the worker's pane literally, then press Enter. Pending input is
cleared first (Escape, Ctrl-U) unless --raw. Multi-line text is pasted as one
bracketed paste, so the agent receives it as one message.`,
		Example: `  swarm send fixer "run the tests again"
  swarm send fixer -- "-n starts with a dash"
  swarm send --all "commit your work now"`,
		Args: argsRange(1, 2, "NAME TEXT, or --all TEXT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			names, text := args[:len(args)-1], args[len(args)-1]
			if !opts.All && len(names) == 0 {
				// "send w": the text is missing (a usage error, unlike
				// kill with neither a name nor --all).
				return usagef("give a worker name and the text")
			}
			var err error
			if opts.Name, err = nameOrAll(names, opts.All); err != nil {
				return err
			}
			opts.Text = text
			if runF != nil {
				return runF(opts)
			}
			return runSend(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "send to every running tmux worker")
	cmd.Flags().BoolVar(&opts.Send.NoEnter, "no-enter", false, "do not press Enter")
	cmd.Flags().BoolVar(&opts.Send.Raw, "raw", false, "do not clear pending input first")
	return cmd
}

func runSend(opts *sendOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	if !opts.All {
		if err := m.Send(opts.Name, opts.Text, opts.Send); err != nil {
			return workerError(err, exitFail)
		}
		fmt.Fprintf(opts.IO.Out, "sent to %s\n", opts.Name)
		return nil
	}
	names, err := runningTmux(m)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	for _, n := range names {
		if err := m.Send(n, opts.Text, opts.Send); err != nil {
			opts.IO.Warn(err.Error())
			continue
		}
		fmt.Fprintf(opts.IO.Out, "sent to %s\n", n)
	}
	return nil
}

func runningTmux(m *worker.Manager) ([]string, error) {
	live, err := m.RunningTmux()
	var names []string
	for _, l := range live {
		names = append(names, l.Name)
	}
	return names, err
}
