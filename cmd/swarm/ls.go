package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

type lsOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Format string // table, json or names
	Status string // running, stopped or all
	Tag    string // "": any
	// Hosts are the hosts to list too (--all-hosts, --hosts).
	Hosts  hostSet
	Caller func(hostSet) (*hostsCaller, bool, error)
}

func newCmdLs(f *factory, runF func(*lsOptions) error) *cobra.Command {
	opts := &lsOptions{IO: f.IO, Manager: f.Manager,
		Caller: func(s hostSet) (*hostsCaller, bool, error) { return newHostsCaller(f, s) }}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List workers with their live status",
		Example: `  swarm ls
  swarm ls --status running --format names
  swarm ls --format json | jq '.[] | select(.metadata.ralph == true)'
  swarm ls --all-hosts
  swarm ls --hosts gpu1,gpu2 --format json | jq -r '.[] | "\(.host):\(.name)"'`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			if opts.Hosts.any() {
				return runLsHosts(opts)
			}
			return runLs(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", "table", []string{"table", "json", "names"}, "output format: table, json or names")
	enumVar(cmd.Flags(), &opts.Status, "status", "all", []string{"running", "stopped", "all"}, "show only running, stopped or all workers")
	cmd.Flags().StringVar(&opts.Tag, "tag", "", "show only workers with this tag")
	addHostSetFlags(cmd.Flags(), &opts.Hosts)
	cmd.MarkFlagsMutuallyExclusive(allHostsFlag, hostsFlag)
	return cmd
}

// listed lists this machine's workers as ls shows them (--status, --tag).
func (opts *lsOptions) listed() ([]worker.Live, error) {
	m, err := opts.Manager()
	if err != nil {
		return nil, err
	}
	live, err := m.List()
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	restore.Mark(m, live)
	if opts.Status == "all" && opts.Tag == "" {
		return live, nil
	}
	var shown []worker.Live
	for _, l := range live {
		if opts.Status != "all" && l.Status != opts.Status {
			continue
		}
		if opts.Tag != "" && !slices.Contains(l.Tags, opts.Tag) {
			continue
		}
		shown = append(shown, l)
	}
	return shown, nil
}

// recordOf is a worker as ls --format json prints it.
func recordOf(l worker.Live) lsRecord {
	r := lsRecord{Worker: l.Worker, Lost: l.Lost, NotStarted: l.NotStarted}
	if code, ok := exitOf(l); ok {
		r.ExitCode = &code
	}
	return r
}

func runLs(opts *lsOptions) error {
	shown, err := opts.listed()
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		records := make([]lsRecord, 0, len(shown))
		for _, l := range shown {
			records = append(records, recordOf(l))
		}
		return printJSON(opts.IO, records)
	case "names":
		var b strings.Builder
		for _, l := range shown {
			b.WriteString(l.Name + "\n")
		}
		_, err := io.WriteString(opts.IO.Out, b.String())
		return err
	}
	return printWorkerTable(opts.IO.Out, shown)
}

// lsRecord is a worker record as ls --format json prints it: swarm.py's
// keys with the live status, and the exit code of a worker whose command
// exited (a tmux worker's pane kept, a process worker's recorded by its
// supervisor), and lost for one a reboot or a killed tmux server took
// (swarm restore brings it back), and not_started for a loop's worker
// made with --no-run and never run (swarm ralph run starts it), which
// swarm.py readers ignore.
type lsRecord struct {
	state.Worker
	ExitCode   *int `json:"exit_code,omitempty"`
	Lost       bool `json:"lost,omitempty"`
	NotStarted bool `json:"not_started,omitempty"`
}

// exitOf is a stopped worker's exit code, when it is known.
func exitOf(l worker.Live) (int, bool) {
	return l.ExitCode, l.HasExit && !l.Running()
}

// printWorkerTable prints swarm.py's ls columns; a stopped worker's exit
// code, when known, follows its status ("stopped(3)"), and a lost one is
// noted so ("stopped(lost)": swarm restore brings it back), as is a
// loop's worker that has not started ("stopped(not-started)": --no-run).
func printWorkerTable(w io.Writer, shown []worker.Live) error {
	if len(shown) == 0 {
		return nil
	}
	tw, flush := newTable(w)
	fmt.Fprintln(tw, strings.Join(lsColumns, "\t"))
	for _, l := range shown {
		fmt.Fprintln(tw, strings.Join(workerCells(l), "\t"))
	}
	return flush()
}

// lsColumns are ls's columns.
var lsColumns = []string{"NAME", "STATUS", "PID/WINDOW", "STARTED", "WORKTREE", "TAG"}

// workerCells are a worker's cells in ls's table. Tags and paths are the
// user's, the rest the state file's (or a host's): no cell may hold a
// control character (a newline forges a row).
func workerCells(l worker.Live) []string {
	where := "-"
	if l.Tmux != nil {
		where = l.Tmux.Session + ":" + l.Tmux.Window
	} else if l.PID != nil {
		where = fmt.Sprint(*l.PID)
	}
	wt := "-"
	if l.Worktree != nil {
		wt = l.Worktree.Path
	}
	tags := "-"
	if len(l.Tags) > 0 {
		tags = strings.Join(l.Tags, ",")
	}
	status := l.Status
	if code, ok := exitOf(l); ok {
		status = fmt.Sprintf("%s(%d)", l.Status, code)
	}
	if l.Lost {
		status = l.Status + "(lost)"
	}
	if l.NotStarted {
		status = l.Status + "(not-started)"
	}
	cells := []string{l.Name, status, where, age(l.Started), wt, tags}
	for i, c := range cells {
		cells[i] = termtext.Line(c)
	}
	return cells
}

// newTable returns a tabwriter for a table and the function that prints
// it. The table reaches w through a buffer, a few writes of 4 KiB:
// tabwriter writes every cell and every run of padding on its own, some
// 6000 writes for 500 workers.
func newTable(w io.Writer) (*tabwriter.Writer, func() error) {
	bw := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	return tw, func() error {
		if err := tw.Flush(); err != nil {
			return err
		}
		return bw.Flush()
	}
}

func age(t state.Timestamp) string {
	if t.IsZero() {
		return "-"
	}
	return duration.Age(time.Since(t.Time))
}

func printJSON(io *IO, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	fmt.Fprintln(io.Out, string(data))
	return nil
}
