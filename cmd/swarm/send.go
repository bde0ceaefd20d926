package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/worker"
)

type sendOptions struct {
	all  bool
	opts worker.SendOptions
}

func newSendCmd(e *env) *cobra.Command {
	o := &sendOptions{}
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
		RunE: func(cmd *cobra.Command, args []string) error { return runSend(e, o, args) },
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "send to every running tmux worker")
	cmd.Flags().BoolVar(&o.opts.NoEnter, "no-enter", false, "do not press Enter")
	cmd.Flags().BoolVar(&o.opts.Raw, "raw", false, "do not clear pending input first")
	return cmd
}

func runSend(e *env, o *sendOptions, args []string) error {
	m := e.manager()
	if o.all {
		if len(args) != 1 {
			return usagef("with --all give only the text")
		}
		names, err := runningTmux(m)
		if err != nil {
			return fail(1, "%v", err)
		}
		for _, n := range names {
			if err := m.Send(n, args[0], o.opts); err != nil {
				e.io.Warn(err.Error())
				continue
			}
			fmt.Fprintf(e.io.Out, "sent to %s\n", n)
		}
		return nil
	}
	if len(args) != 2 {
		return usagef("give a worker name and the text (see: swarm send --help)")
	}
	if err := m.Send(args[0], args[1], o.opts); err != nil {
		return workerError(err, 1)
	}
	fmt.Fprintf(e.io.Out, "sent to %s\n", args[0])
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
