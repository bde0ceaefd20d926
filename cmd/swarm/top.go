package main

import (
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/board"
)

// minTopInterval is the shortest --interval: each refresh runs tmux once
// per socket and reads every loop's state, which should not become a
// busy loop on a machine running fifty agents.
const minTopInterval = 100 * time.Millisecond

type topOptions struct {
	IO   *IO
	Root func() (string, error)

	Interval time.Duration
	Once     bool
	Format   string // --once: text or json
	// Hosts are the hosts to show too (--all-hosts, --hosts).
	Hosts  hostSet
	Caller func(hostSet) (*hostsCaller, bool, error)
}

func newCmdTop(f *factory, runF func(*topOptions) error) *cobra.Command {
	opts := &topOptions{IO: f.IO, Root: f.Root,
		Caller: func(s hostSet) (*hostsCaller, bool, error) { return newHostsCaller(f, s) }}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live board of every worker and loop, problems first",
		Long: `Show every worker and ralph loop on one live, full-screen board: kind, status,
iteration, elapsed time and ETA, how long the screen has been quiet, the loop's
monitor, failures, how it ended and the tags. Failed loops, loops that ended
BLOCKED or DECIDE (the reason or question on a line under the row), loops whose
monitor is dead, agents quiet for longer than the inactivity timeout, loops
waiting out a usage limit and paused loops come first.

Keys: up/down select; enter shows the worker's screen, or an ended loop's last
output, l the loop's events and d a worktree worker's diff against its base
(esc goes back); a attaches (detach to come
back); p pauses and r resumes the loop; k kills the worker after y confirms;
/ filters by name or tag (esc clears); ? shows every key; q quits. The
terminal bell rings when a loop spawned with --notify ends while the board is
open.

--once prints the board once as plain text and exits, for scripts (--format
json: its rows as JSON).

--all-hosts (or --hosts a,b) shows the hosts of swarm hosts ls too, with a
HOST column: each is asked once a refresh, all at once; one that does not
answer within --connect-timeout gets a row saying so and keeps its last rows,
marked stale. The keys act on a host's worker through ssh.`,
		Example: `  swarm top
  swarm top --interval 5s
  swarm top --once | awk 'NR > 1 && $3 == "failed" {print $1}'
  swarm top --all-hosts`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Format == formatJSON && !opts.Once {
				return usagef("--format json needs --once")
			}
			if runF != nil {
				return runF(opts)
			}
			return runTop(opts)
		},
	}
	durationVar(cmd.Flags(), &opts.Interval, "interval", board.DefaultInterval, minTopInterval, "time between refreshes (seconds, or 500ms, 5s)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "print the board once as plain text and exit")
	enumVar(cmd.Flags(), &opts.Format, "format", formatText, []string{formatText, formatJSON}, "with --once: text or json")
	addHostSetFlags(cmd.Flags(), &opts.Hosts)
	cmd.MarkFlagsMutuallyExclusive(allHostsFlag, hostsFlag)
	return cmd
}

func runTop(opts *topOptions) error {
	root, err := opts.Root()
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if opts.Once {
		src, err := opts.source(root, opts.IO.Warn)
		if err != nil {
			return err
		}
		snap, err := src.Snapshot()
		if err != nil {
			return &exitError{code: exitFail, err: err}
		}
		rows := board.Prepare(snap)
		if opts.Format == formatJSON {
			if rows == nil {
				rows = []board.Row{}
			}
			return printJSON(opts.IO, rows)
		}
		return board.WritePlain(opts.IO.Out, rows)
	}
	if !isTerminal(opts.IO.In) || !isTerminal(opts.IO.Out) {
		return fail(exitFail, "swarm top needs a terminal (use --once for plain text)")
	}
	// Warnings printed on stderr would scribble over the board: they go
	// to its status line, and are printed once more when it closes.
	warnings := &warnSink{}
	src, err := opts.source(root, warnings.Warn)
	if err != nil {
		return err
	}
	err = board.Run(board.Options{Source: src, Interval: opts.Interval, Warnings: warnings.Take}, opts.IO.In, opts.IO.Out)
	for _, w := range warnings.All() {
		opts.IO.Warn(w)
	}
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}

// topSource is the board's view of the state root: the commands' worker
// manager (kill stops heartbeats and loops too), with its warnings sent
// to warn.
func topSource(root string, warn func(string)) *board.ManagerSource {
	m := newManager(root, warn)
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return &board.ManagerSource{M: m, Self: self, Env: os.Environ()}
}

// source is the board's source: this machine, and the hosts asked for.
func (opts *topOptions) source(root string, warn func(string)) (board.Source, error) {
	local := topSource(root, warn)
	if !opts.Hosts.any() {
		return local, nil
	}
	caller, withLocal, err := opts.Caller(opts.Hosts)
	if err != nil {
		return nil, err
	}
	src := &board.HostsSource{Hosts: &topHosts{caller: caller, self: local.Self, root: root, env: local.Env}}
	if withLocal {
		src.Local = local
	}
	return src, nil
}

// warnSink collects warnings while the board is on screen.
type warnSink struct {
	mu    sync.Mutex
	fresh []string
	all   []string
	seen  map[string]bool
}

// Warn records a warning; a repeat is recorded once.
func (s *warnSink) Warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[msg] {
		return
	}
	s.seen[msg] = true
	s.fresh = append(s.fresh, msg)
	s.all = append(s.all, msg)
}

// Take returns the warnings recorded since the last call.
func (s *warnSink) Take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.fresh
	s.fresh = nil
	return out
}

// All returns every warning recorded.
func (s *warnSink) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}
