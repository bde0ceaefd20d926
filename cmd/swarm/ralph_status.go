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
)

func newRalphStatusCmd(e *env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a loop's progress, whether its monitor runs, and how it ended",
		Example: `  swarm ralph status builder
  swarm ralph status builder --format json | jq .exit_reason`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("--format", format, "text", "json"); err != nil {
				return err
			}
			info, err := ralph.LoopStatus(e.manager(), args[0])
			if err != nil {
				return workerError(err, 1)
			}
			if format == "json" {
				return printJSON(e, flatten(info))
			}
			printStatus(e.io.Out, info)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
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

func printStatus(w io.Writer, info *ralph.Info) {
	st := info.State
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
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

func newRalphListCmd(e *env) *cobra.Command {
	var format, status string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ralph loops",
		Example: `  swarm ralph ls
  swarm ralph list --status running --format names`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := oneOf("--format", format, "table", "json", "names"); err != nil {
				return err
			}
			if err := oneOf("--status", status, "running", "paused", "stopped", "failed", "all"); err != nil {
				return err
			}
			infos, err := ralph.ListLoops(e.manager())
			if err != nil {
				return fail(1, "%v", err)
			}
			var shown []*ralph.Info
			for _, i := range infos {
				if status == "all" || i.State.Status == status {
					shown = append(shown, i)
				}
			}
			switch format {
			case "json":
				out := make([]map[string]any, 0, len(shown))
				for _, i := range shown {
					out = append(out, flatten(i))
				}
				return printJSON(e, out)
			case "names":
				for _, i := range shown {
					fmt.Fprintln(e.io.Out, i.State.WorkerName)
				}
				return nil
			}
			if len(shown) == 0 {
				return nil
			}
			tw := tabwriter.NewWriter(e.io.Out, 0, 4, 2, ' ', 0)
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
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table, json or names")
	cmd.Flags().StringVar(&status, "status", "all", "running, paused, stopped, failed or all")
	return cmd
}

func newRalphLogsCmd(e *env) *cobra.Command {
	var live bool
	var lines int
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a loop's iteration events (START, END, FAIL, TIMEOUT, REJECT, DONE ...)",
		Example: `  swarm ralph logs builder
  swarm ralph logs builder --live`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m := e.manager()
			rs := m.Store.Ralph(args[0])
			if !rs.Exists() {
				if _, err := m.Get(args[0]); err != nil {
					return workerError(err, 1)
				}
				return fail(1, "worker '%s' is not a ralph worker", args[0])
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if err := ralph.Events(ctx, rs, lines, live, e.io.Out); err != nil {
				return fail(1, "%v", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&live, "live", false, "keep printing new events until Ctrl-C or the loop ends")
	cmd.Flags().IntVar(&lines, "lines", 50, "print at most this many of the latest events")
	return cmd
}
