package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/heartbeat"
)

// Output formats of heartbeat list and status.
const (
	formatTable = "table"
	formatText  = "text"
	formatJSON  = "json"
)

// newCmdHeartbeat is the heartbeat command group; run alone or with an
// unknown subcommand it is a usage error (requireSubcommands).
func newCmdHeartbeat(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "heartbeat",
		Short: "Nudge a worker on a schedule (so an agent stalled on rate limits retries)",
		Long: `A heartbeat nudges a worker: it types a short message ("continue" by default)
into a tmux worker's pane at a fixed interval. An agent that stopped on usage or
rate limits picks the work up again once they renew, without anyone watching
it. A beat is skipped while the previous message still sits unread on the
pane's last line.

Each heartbeat is one background process per worker; it ends when stopped,
when it expires, or when its worker is gone. swarm kill and swarm clean end it
too.

Quick Reference:
  swarm heartbeat start W --interval 4h --expire 24h    nudge W every 4 hours, for a day
  swarm heartbeat list                                  every heartbeat and its next beat
  swarm heartbeat status W                              one heartbeat in detail
  swarm heartbeat pause W / resume W                    hold the beats, then go on
  swarm heartbeat stop W                                end it
  swarm spawn --name W --tmux --heartbeat 4h -- claude  spawn a worker with one`,
		Example: `  swarm heartbeat start builder --interval 4h --expire 24h
  swarm heartbeat start builder --interval 30m --message "please continue" --force
  swarm heartbeat ls --format json`,
	}
	cmd.AddCommand(
		newCmdHeartbeatStart(f, nil), newCmdHeartbeatStop(f, nil), newCmdHeartbeatList(f, nil),
		newCmdHeartbeatStatus(f, nil), newCmdHeartbeatPause(f, nil), newCmdHeartbeatResume(f, nil),
		newCmdHeartbeatRun(f, nil),
	)
	return cmd
}

// rawDuration is a duration flag kept as typed: heartbeat.Parse checks it
// when the command runs, so a bad value gets swarm.py's message and exit 1
// ("invalid interval 'x'"), not a usage error. Its type shows as duration
// in help.
type rawDuration struct{ p *string }

func (v rawDuration) String() string     { return *v.p }
func (v rawDuration) Set(s string) error { *v.p = s; return nil }
func (v rawDuration) Type() string       { return "duration" }

type heartbeatStartOptions struct {
	IO   *IO
	Root func() (string, error)

	Name string
	// Config is --interval, --expire and --message, checked.
	Config heartbeat.Config
	Force  bool
}

func newCmdHeartbeatStart(f *factory, runF func(*heartbeatStartOptions) error) *cobra.Command {
	opts := &heartbeatStartOptions{IO: f.IO, Root: f.Root}
	var raw heartbeat.Flags
	cmd := &cobra.Command{
		Use:   "start WORKER --interval DURATION",
		Short: "Start a heartbeat for a tmux worker",
		Long: `Start a heartbeat: every --interval, type --message into the worker's pane and
press Enter. The worker must be a tmux worker. --expire ends the heartbeat after
that long (paused time not counted); without it the heartbeat runs until stopped.

Durations: 90 (seconds), 90s, 30m, 4h, 1h30m. An interval under a minute
draws a warning.`,
		Example: `  swarm heartbeat start builder --interval 4h
  swarm heartbeat start builder --interval 4h --expire 24h
  swarm heartbeat start builder --interval 1h --message "go on" --force`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if !cmd.Flags().Changed("interval") {
				return usagef("--interval is required")
			}
			// Checked before anything is touched, with swarm.py's
			// messages (exit 1).
			c, warn, err := heartbeat.Parse(raw, false)
			if err != nil {
				return err
			}
			if warn != "" {
				opts.IO.Warn(warn)
			}
			opts.Config = c
			if runF != nil {
				return runF(opts)
			}
			return runHeartbeatStart(opts)
		},
	}
	fs := cmd.Flags()
	fs.Var(rawDuration{&raw.Interval}, "interval", "time between beats (e.g. 30m, 4h; required)")
	fs.Var(rawDuration{&raw.Expire}, "expire", "end the heartbeat after this long (e.g. 24h; default: never)")
	fs.StringVar(&raw.Message, "message", heartbeat.DefaultMessage, "text typed at each beat")
	fs.BoolVar(&opts.Force, "force", false, "replace a heartbeat the worker already has")
	return cmd
}

func runHeartbeatStart(opts *heartbeatStartOptions) error {
	root, err := opts.Root()
	if err != nil {
		return err
	}
	if _, err := heartbeat.Start(root, opts.Name, opts.Config, heartbeat.StartOptions{Force: opts.Force, Warn: opts.IO.Warn, Command: heartbeatCommand}); err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, heartbeat.StartedMessage(opts.Name, opts.Config))
	return nil
}

// heartbeatOptions is the options of the heartbeat commands that take one
// worker name and nothing else (stop, pause, resume, run).
type heartbeatOptions struct {
	IO   *IO
	Root func() (string, error)

	Name string
}

// heartbeatAction is what one of those commands does once the state root
// is known.
type heartbeatAction func(opts *heartbeatOptions, root string) error

// newCmdHeartbeatName builds a command on one worker name that runs act
// (or runF, in tests).
func newCmdHeartbeatName(f *factory, runF func(*heartbeatOptions) error, c *cobra.Command, act heartbeatAction) *cobra.Command {
	opts := &heartbeatOptions{IO: f.IO, Root: f.Root}
	c.Args = argsRange(1, 1, "one worker name")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Name = args[0]
		if runF != nil {
			return runF(opts)
		}
		root, err := opts.Root()
		if err != nil {
			return err
		}
		return act(opts, root)
	}
	return c
}

func newCmdHeartbeatStop(f *factory, runF func(*heartbeatOptions) error) *cobra.Command {
	return newCmdHeartbeatName(f, runF, &cobra.Command{
		Use:     "stop WORKER",
		Short:   "End a worker's heartbeat (it returns once the heartbeat's process has exited)",
		Example: "  swarm heartbeat stop builder",
	}, runHeartbeatStop)
}

func runHeartbeatStop(opts *heartbeatOptions, root string) error {
	found, err := heartbeat.Stop(root, opts.Name)
	if err != nil {
		return err
	}
	if !found {
		// Nothing to stop is what the caller wanted: swarm.py exits 0.
		fmt.Fprintf(opts.IO.Out, "No active heartbeat for %s\n", opts.Name)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "Heartbeat stopped for %s\n", opts.Name)
	return nil
}

func newCmdHeartbeatPause(f *factory, runF func(*heartbeatOptions) error) *cobra.Command {
	return newCmdHeartbeatName(f, runF, &cobra.Command{
		Use:     "pause WORKER",
		Short:   "Hold a heartbeat's beats until resume (expiry is held too)",
		Example: "  swarm heartbeat pause builder",
	}, func(opts *heartbeatOptions, root string) error {
		if err := heartbeat.Pause(root, opts.Name); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "Heartbeat paused for %s\n", opts.Name)
		return nil
	})
}

func newCmdHeartbeatResume(f *factory, runF func(*heartbeatOptions) error) *cobra.Command {
	return newCmdHeartbeatName(f, runF, &cobra.Command{
		Use:   "resume WORKER",
		Short: "Resume a paused heartbeat (also restarts one whose process died)",
		Long: `Resume a paused heartbeat: the next beat comes one interval from now, and the
expiry moves on by the time spent paused. An active heartbeat whose process
died (a crash, a reboot) gets a new process.`,
		Example: "  swarm heartbeat resume builder",
	}, func(opts *heartbeatOptions, root string) error {
		if err := heartbeat.Resume(root, opts.Name, heartbeat.StartOptions{Warn: opts.IO.Warn, Command: heartbeatCommand}); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "Heartbeat resumed for %s\n", opts.Name)
		return nil
	})
}

// newCmdHeartbeatRun is the heartbeat process itself, which
// heartbeat.Start runs detached; hidden from help.
func newCmdHeartbeatRun(f *factory, runF func(*heartbeatOptions) error) *cobra.Command {
	return newCmdHeartbeatName(f, runF, &cobra.Command{
		Use:    "run WORKER",
		Short:  "Run a worker's heartbeat in this process (started by heartbeat start)",
		Hidden: true,
	}, runHeartbeatRun)
}

// runHeartbeatRun beats until the heartbeat ends. SIGTERM or Ctrl-C end
// the process and leave the state as it is, so resume restarts it. It
// does not recover other heartbeats: a process started to recover one
// must not start more.
func runHeartbeatRun(opts *heartbeatOptions, root string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return heartbeat.Run(ctx, root, opts.Name)
}

type heartbeatListOptions struct {
	IO   *IO
	Root func() (string, error)

	Format string // table or json
}

func newCmdHeartbeatList(f *factory, runF func(*heartbeatListOptions) error) *cobra.Command {
	opts := &heartbeatListOptions{IO: f.IO, Root: f.Root}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List heartbeats, with their next beat and expiry",
		Example: `  swarm heartbeat list
  swarm heartbeat ls --format json`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runHeartbeatList(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", formatTable, []string{formatTable, formatJSON}, "output format: table or json")
	return cmd
}

func runHeartbeatList(opts *heartbeatListOptions) error {
	root, err := opts.Root()
	if err != nil {
		return err
	}
	states, err := heartbeat.NewStore(root, opts.IO.Warn).List()
	if err != nil {
		return err
	}
	out, err := heartbeat.RenderList(states, time.Now(), opts.Format)
	if err != nil {
		return err
	}
	fmt.Fprint(opts.IO.Out, out)
	return nil
}

type heartbeatStatusOptions struct {
	IO   *IO
	Root func() (string, error)

	Name   string
	Format string // text or json
}

func newCmdHeartbeatStatus(f *factory, runF func(*heartbeatStatusOptions) error) *cobra.Command {
	opts := &heartbeatStatusOptions{IO: f.IO, Root: f.Root}
	cmd := &cobra.Command{
		Use:   "status WORKER",
		Short: "Show a heartbeat: status, whether its process runs, last and next beat, expiry",
		Example: `  swarm heartbeat status builder
  swarm heartbeat status builder --format json`,
		Args: argsRange(1, 1, "one worker name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runHeartbeatStatus(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", formatText, []string{formatText, formatJSON}, "output format: text or json")
	return cmd
}

func runHeartbeatStatus(opts *heartbeatStatusOptions) error {
	root, err := opts.Root()
	if err != nil {
		return err
	}
	s := heartbeat.NewStore(root, opts.IO.Warn)
	st, err := s.Load(opts.Name)
	if err != nil {
		return err
	}
	if st == nil {
		return &heartbeat.Error{Kind: heartbeat.KindNoHeartbeat, Msg: "No heartbeat found for " + opts.Name}
	}
	// Liveness from the lock the process holds, never from the stored
	// pid alone (docs/security.md, "Identity before signals").
	lock := s.LockPath(opts.Name)
	out, err := heartbeat.RenderStatus(st, heartbeat.Monitor{Alive: daemon.Alive(lock), PID: daemon.Holder(lock)}, time.Now(), opts.Format)
	if err != nil {
		return err
	}
	fmt.Fprint(opts.IO.Out, out)
	return nil
}
