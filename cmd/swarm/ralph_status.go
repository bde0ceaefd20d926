package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

type ralphStatusOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name   string
	Format string // text or json
}

func newCmdRalphStatus(f *factory, runF func(*ralphStatusOptions) error) *cobra.Command {
	opts := &ralphStatusOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a loop's progress, whether its monitor runs, and how it ended",
		Example: `  swarm ralph status builder
  swarm ralph status builder --format json | jq .exit_reason`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runRalphStatus(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", "text", []string{"text", "json"}, "text or json")
	return cmd
}

func runRalphStatus(opts *ralphStatusOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	info, err := ralph.LoopStatus(m, opts.Name)
	if err != nil {
		return workerError(err, exitFail)
	}
	if opts.Format == "json" {
		return printJSON(opts.IO, flatten(info))
	}
	printStatus(opts.IO.Out, info)
	return nil
}

// flatten renders a loop's status as its state.json object plus the live
// fields, so scripts read one flat object.
func flatten(info *ralph.Info) map[string]any {
	data, _ := json.Marshal(info.State)
	var m map[string]any
	json.Unmarshal(data, &m)
	delete(m, "delivered_prompt")
	m["monitor_alive"] = info.MonitorAlive
	m["avg_iteration_seconds"] = info.AvgIteration
	m["eta_seconds"] = info.ETA
	m["quiet_seconds"] = info.QuietFor
	m["exit_code"] = nil
	if !info.State.Active() {
		m["exit_code"] = ralph.ExitCode(string(info.State.ExitReason))
	}
	if info.LastOutput != nil {
		m["last_output"] = info.LastOutput
	}
	return m
}

// printStatus prints ralph status's text: progress, then the loop's
// settings and how it ended.
func printStatus(w io.Writer, info *ralph.Info) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	printProgress(p, info)
	printEnd(p, info)
}

func printProgress(p func(string, ...any), info *ralph.Info) {
	st := info.State
	p("Ralph Loop: %s", st.WorkerName)
	p("Status: %s", st.Status)
	switch {
	case info.MonitorAlive:
		p("Monitor: running (pid %d)", st.MonitorPID)
	case st.Active():
		p("Monitor: not running (resume with: swarm ralph resume %s)", st.WorkerName)
	default:
		p("Monitor: not running")
	}
	p("Iteration: %d/%d", st.CurrentIteration, st.MaxIterations)
	if info.AvgIteration > 0 {
		p("Average iteration: %s", duration.Format(time.Duration(info.AvgIteration*float64(time.Second))))
		if st.Active() {
			p("ETA: %s", duration.Format(time.Duration(info.ETA*float64(time.Second))))
		}
	}
	p("Started: %s", st.Started.Human())
	p("Current iteration started: %s", st.LastIterationStart.Human())
	p("Consecutive failures: %d", st.ConsecutiveFailures)
	p("Total failures: %d", st.TotalFailures)
	p("Inactivity timeout: %ds", st.InactivityTimeout)
	if !st.LastScreenChange.IsZero() && st.Active() {
		p("Last screen change: %s ago", duration.Format(time.Since(st.LastScreenChange.Time)))
	}
	if st.DonePattern != "" {
		p("Done pattern: %s", st.DonePattern)
	}
	if st.DoneFile != "" {
		p("Done file: %s", st.DoneFile)
	}
	if len(st.Checks) > 0 {
		p("Checks: %s", strings.Join(st.Checks, "; "))
	}
	if st.MaxTime > 0 {
		p("Time budget: %s", duration.Words(time.Duration(st.MaxTime*float64(time.Second))))
	}
}

func printEnd(p func(string, ...any), info *ralph.Info) {
	st := info.State
	if st.Status == state.RalphPaused && st.PauseReason != "" {
		p("Paused: %s", st.PauseReason)
	}
	if st.ExitReason != "" {
		p("Exit reason: %s (exit code %d)", st.ExitReason, ralph.ExitCode(string(st.ExitReason)))
	}
	switch string(st.ExitReason) {
	case ralph.ReasonBlocked:
		p("Blocked: %s", st.ExitDetail)
	case ralph.ReasonDecide:
		p("Question: %s", st.ExitDetail)
	default:
		if st.ExitDetail != "" {
			p("Detail: %s", st.ExitDetail)
		}
	}
	if len(st.TasksDone) > 0 {
		var tasks []string
		for _, t := range st.TasksDone {
			tasks = append(tasks, fmt.Sprintf("%s (iteration %d)", t.ID, t.Iteration))
		}
		p("Tasks done: %s", strings.Join(tasks, ", "))
	}
	if len(info.LastOutput) > 0 {
		p("Last output (quiet for %s):", duration.Format(time.Duration(info.QuietFor*float64(time.Second))))
		for _, l := range info.LastOutput {
			p("  %s", l)
		}
	}
}

type ralphListOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Format string // table, json or names
	Status string // running, paused, stopped, failed or all
}

func newCmdRalphList(f *factory, runF func(*ralphListOptions) error) *cobra.Command {
	opts := &ralphListOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ralph loops",
		Example: `  swarm ralph ls
  swarm ralph list --status running --format names`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRalphList(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", "table", []string{"table", "json", "names"}, "table, json or names")
	enumVar(cmd.Flags(), &opts.Status, "status", "all", []string{"running", "paused", "stopped", "failed", "all"}, "running, paused, stopped, failed or all")
	return cmd
}

func runRalphList(opts *ralphListOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	infos, err := ralph.ListLoops(m)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	var shown []*ralph.Info
	for _, i := range infos {
		if opts.Status == "all" || i.State.Status == opts.Status {
			shown = append(shown, i)
		}
	}
	switch opts.Format {
	case "json":
		out := make([]map[string]any, 0, len(shown))
		for _, i := range shown {
			out = append(out, flatten(i))
		}
		return printJSON(opts.IO, out)
	case "names":
		for _, i := range shown {
			fmt.Fprintln(opts.IO.Out, i.State.WorkerName)
		}
		return nil
	}
	return printLoopTable(opts.IO.Out, shown)
}

func printLoopTable(w io.Writer, shown []*ralph.Info) error {
	if len(shown) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tITERATION\tFAILURES\tMONITOR\tREASON")
	for _, i := range shown {
		st := i.State
		mon := "-"
		if i.MonitorAlive {
			mon = fmt.Sprint(st.MonitorPID)
		}
		reason := "-"
		if st.ExitReason != "" {
			reason = string(st.ExitReason)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%s\t%s\n", st.WorkerName, st.Status, st.CurrentIteration, st.MaxIterations, st.TotalFailures, mon, reason)
	}
	return tw.Flush()
}

type ralphLogsOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name  string
	Live  bool
	Lines int // 0: all
}

func newCmdRalphLogs(f *factory, runF func(*ralphLogsOptions) error) *cobra.Command {
	opts := &ralphLogsOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a loop's iteration events (START, END, FAIL, TIMEOUT, REJECT, DONE ...)",
		Example: `  swarm ralph logs builder
  swarm ralph logs builder --live`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runRalphLogs(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Live, "live", false, "keep printing new events until Ctrl-C or the loop ends")
	intVar(cmd.Flags(), &opts.Lines, "lines", defaultRalphLogsLines, 0, noMax, "print at most this many of the latest events (0: all)")
	return cmd
}

func runRalphLogs(opts *ralphLogsOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	rs := m.Store.Ralph(opts.Name)
	if !rs.Exists() {
		if _, err := m.Get(opts.Name); err != nil {
			return workerError(err, exitFail)
		}
		return fail(exitFail, "worker '%s' is not a ralph worker", opts.Name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := ralph.Events(ctx, rs, opts.Lines, opts.Live, opts.IO.Out); err != nil {
		return &exitError{code: exitFail, err: err}
	}
	return nil
}
