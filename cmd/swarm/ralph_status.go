package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/restore"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
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
		Long: `Show a loop: its status and whether its monitor process is alive, the current
iteration of the maximum with the average iteration time and an ETA, when the
loop and the current iteration started, failures, the inactivity timeout and
the last screen change, and how the loop ended. A screen unchanged for over a
minute adds its last lines.`,
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
	// As ls and ralph ls mark it: a loop with no monitor is lost.
	info.WorkerLost = info.WorkerLost || (info.WorkerStatus != "removed" && restore.LoopLost(m, opts.Name))
	if opts.Format == "json" {
		return printJSON(opts.IO, flatten(info))
	}
	printStatus(opts.IO.Out, info)
	return nil
}

// flatten renders a loop's status as its state.json object plus the
// computed figures, so scripts read one flat object; ralph status and
// ralph ls --format json print the same keys.
func flatten(info *ralph.Info) map[string]any {
	data, _ := json.Marshal(info.State)
	var m map[string]any
	_ = json.Unmarshal(data, &m) // json.Marshal's own output of a struct
	delete(m, "delivered_prompt")
	m["monitor_alive"] = info.MonitorAlive
	m["monitor"] = info.MonitorState()
	m["worker_status"] = info.WorkerStatus
	m["elapsed_seconds"] = info.Elapsed
	m["avg_iteration_seconds"] = info.AvgIteration
	m["eta_seconds"] = info.ETA
	m["quiet_seconds"] = info.QuietFor
	m["list_status"] = info.ListStatus()
	m["exit_code"] = nil
	if !info.State.Active() {
		m["exit_code"] = ralph.LoopExitCode(info.State)
	}
	if info.LastOutput != nil {
		m["last_output"] = info.LastOutput
	}
	if info.LastOutputIteration > 0 {
		m["last_output_iteration"] = info.LastOutputIteration
	}
	if info.Profile != "" {
		m["agent"] = info.Profile
	}
	if !agentJudged(info) {
		m["agent_state"], m["agent_detail"] = nil, nil
	}
	if info.WorkerLost {
		m["worker_lost"] = true
	}
	return m
}

// agentJudged reports whether the loop's last judgement of its agent
// (agent_state) is still the agent's: not once the loop has stopped or
// the agent's pane is dead (between iterations, or lost), when the last
// state would say "working" of an agent that is gone.
func agentJudged(info *ralph.Info) bool {
	return info.State.Active() && info.PaneAlive
}

// printStatus prints ralph status's text: swarm.py's lines first, in its
// order and wording, then the lines swarm adds. Many lines quote the
// agent (its BLOCKED reason, its last output, a check's output) or the
// state file, so each is made one line of printable text (termtext.Line).
func printStatus(w io.Writer, info *ralph.Info) {
	p := func(format string, args ...any) { fmt.Fprintln(w, termtext.Line(fmt.Sprintf(format, args...))) }
	printSwarmPyStatus(p, info)
	printMore(p, info)
}

// seconds renders a float number of seconds as a duration for humans, as
// swarm top does.
func seconds(f float64) string { return duration.Format(duration.Seconds(f)) }

// printSwarmPyStatus prints the lines swarm.py's ralph status prints.
func printSwarmPyStatus(p func(string, ...any), info *ralph.Info) {
	st := info.State
	quiet := int(info.QuietFor)
	status := "Status: " + string(st.Status)
	if info.NotStarted {
		status = fmt.Sprintf("Status: not started (start it with: swarm ralph run %s)", st.WorkerName)
	} else if st.Status == state.RalphWaiting && !st.WaitingUntil.IsZero() {
		status = "Status: waiting for usage limit reset until " + ralph.ResetTime(st.WaitingUntil.Time, time.Now())
	} else if info.QuietFor > 60 {
		status += fmt.Sprintf(" (possibly stuck — no output change for %ds)", quiet)
	}
	p("Ralph Loop: %s", st.WorkerName)
	p("%s", status)
	p("%s", iterationLine(info))
	p("Started: %s", st.Started.Human())
	p("Current iteration started: %s", st.LastIterationStart.Human())
	if !st.Active() && !st.LastIterationEnd.IsZero() {
		p("Last iteration ended: %s", st.LastIterationEnd.Human())
	}
	p("Consecutive failures: %d", st.ConsecutiveFailures)
	p("Total failures: %d", st.TotalFailures)
	p("Inactivity timeout: %ds", st.InactivityTimeout.Int())
	p("Last screen change: %s", screenChange(info))
	if st.DonePattern != "" {
		p("Done pattern: %s", st.DonePattern)
	}
	if len(info.LastOutput) > 0 && info.LastOutputIteration > 0 {
		p("Last output (iteration %d, the agent's last lines):", info.LastOutputIteration)
		for _, l := range info.LastOutput {
			p("  %s", l)
		}
	} else if len(info.LastOutput) > 0 {
		p("Last output:")
		for _, l := range info.LastOutput {
			p("  %s", l)
		}
	}
	if st.ExitReason != "" {
		p("Exit reason: %s", st.ExitReason)
	} else if st.Active() {
		p("Exit reason: (none - still running)")
	}
}

// iterationLine is "Iteration: 3/10", with the average iteration time,
// and the time left while a monitor drives the loop.
func iterationLine(info *ralph.Info) string {
	st := info.State
	iteration := fmt.Sprintf("Iteration: %d/%d", st.CurrentIteration, st.MaxIterations)
	if info.AvgIteration > 0 {
		if st.Status == state.RalphRunning && st.CurrentIteration < st.MaxIterations && info.MonitorAlive {
			iteration += fmt.Sprintf(" (avg %s/iter, ~%s remaining)", seconds(info.AvgIteration), seconds(info.ETA))
		} else {
			iteration += fmt.Sprintf(" (avg %s/iter)", seconds(info.AvgIteration))
		}
	}
	return iteration
}

// screenChange is when the agent's screen last changed, as the JSON's
// last_screen_change has it: how long ago while the monitor watches the
// screen (swarm.py's "Ns ago"), else the time recorded, with why it is
// not current for a loop that has not ended.
func screenChange(info *ralph.Info) string {
	st := info.State
	switch {
	case info.Watched():
		return fmt.Sprintf("%ds ago", int(info.QuietFor))
	case st.LastScreenChange.IsZero():
		return "(none)"
	case st.IterationActive && !info.MonitorAlive:
		return st.LastScreenChange.Human() + " (not watched: no monitor)"
	}
	return st.LastScreenChange.Human()
}

// printMore prints what swarm adds: the monitor, the agent, the exit
// code and detail, the completion settings, tasks done.
func printMore(p func(string, ...any), info *ralph.Info) {
	st := info.State
	printMonitor(p, info)
	p("Elapsed: %s", seconds(info.Elapsed))
	printUsage(p, st)
	printAgent(p, info)
	if !st.Active() {
		p("Exit code: %d", ralph.LoopExitCode(st))
	}
	printEnd(p, info)
	printSettings(p, st)
}

// printMonitor prints whether the loop's monitor runs.
func printMonitor(p func(string, ...any), info *ralph.Info) {
	st := info.State
	switch {
	case info.MonitorAlive:
		p("Monitor: running (pid %d)", st.MonitorPID)
	case info.NotStarted:
		p("Monitor: not running (not started)")
	case st.Active():
		p("Monitor: dead (resume with: swarm ralph resume %s)", st.WorkerName)
	default:
		p("Monitor: not running")
	}
}

// printAgent prints what the loop last judged of its agent: where its
// state comes from, the state, its last error, a rejected completion.
func printAgent(p func(string, ...any), info *ralph.Info) {
	st := info.State
	if st.StateSource != "" && st.Active() {
		p("State source: %s", st.StateSource)
	}
	agent := info.Profile
	if st.AgentState != "" && agentJudged(info) {
		judged := string(st.AgentState)
		if st.AgentDetail != "" {
			judged += " (" + string(st.AgentDetail) + ")"
		}
		agent = strings.TrimPrefix(agent+", "+judged, ", ")
	}
	if agent != "" {
		p("Agent: %s", agent)
	}
	if st.LastError != "" && (st.Active() || st.ExitReason == ralph.ReasonFailed) {
		p("Last error: %s", st.LastError)
	}
	if st.LastRejection != "" {
		p("Last rejected completion: %s", st.LastRejection)
		if len(st.LastCheckOutput) > 0 {
			p("Check output (first %d lines):", len(st.LastCheckOutput))
			for _, l := range st.LastCheckOutput {
				p("  %s", l)
			}
		}
	}
}

// printSettings prints the loop's completion settings and budgets.
func printSettings(p func(string, ...any), st *state.Ralph) {
	if st.DoneFile != "" {
		p("Done file: %s", st.DoneFile)
	}
	if len(st.Checks) > 0 {
		p("Checks: %s", strings.Join(st.Checks, "; "))
	}
	if st.MaxTime.Duration > 0 {
		p("Time budget: %s", duration.Words(st.MaxTime.Duration))
	}
	if st.MaxCost > 0 {
		p("Cost budget: %s", ralph.FormatCost(st.MaxCost))
	}
	if st.MaxTokens > 0 {
		p("Token budget: %d", st.MaxTokens)
	}
}

// printUsage prints what the loop's agents reported spending, in total
// and in the latest iteration: "Cost: $1.23 (iteration 3: $0.41)".
func printUsage(p func(string, ...any), st *state.Ralph) {
	var last state.IterationUsage
	if n := len(st.IterationUsage); n > 0 {
		last = st.IterationUsage[n-1]
	}
	if st.CostUSD != nil {
		line := "Cost: " + ralph.FormatCost(*st.CostUSD)
		if last.CostUSD != nil {
			line += fmt.Sprintf(" (iteration %d: %s)", last.Iteration, ralph.FormatCost(*last.CostUSD))
		}
		p("%s", line)
	}
	if st.Tokens() > 0 {
		line := fmt.Sprintf("Tokens: %d (input %d, output %d, cache read %d, cache write %d)",
			st.Tokens(), st.InputTokens, st.OutputTokens, st.CacheReadTokens, st.CacheCreationTokens)
		if last.Tokens() > 0 {
			line += fmt.Sprintf("; iteration %d: %d", last.Iteration, last.Tokens())
		}
		p("%s", line)
	}
}

func printEnd(p func(string, ...any), info *ralph.Info) {
	st := info.State
	if st.Status == state.RalphPaused && st.PauseReason != "" {
		p("Paused: %s", st.PauseReason)
	}
	switch st.ExitReason {
	case ralph.ReasonBlocked:
		p("Blocked: %s", st.ExitDetail)
	case ralph.ReasonDecide:
		p("Question: %s", st.ExitDetail)
	default:
		if st.ExitDetail != "" {
			p("Detail: %s", st.ExitDetail)
		}
	}
	if st.ExitHint != "" && !st.Active() {
		p("Fix: %s", st.ExitHint)
	}
	if len(st.TasksDone) > 0 {
		var tasks []string
		for _, t := range st.TasksDone {
			tasks = append(tasks, fmt.Sprintf("%s (iteration %d)", t.ID, t.Iteration))
		}
		p("Tasks done: %s", strings.Join(tasks, ", "))
	}
}

type ralphListOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Format string // table, json or names
	Status string // running, paused, stopped, failed or all
	// Hosts are the hosts to list too (--all-hosts, --hosts).
	Hosts  hostSet
	Caller func(hostSet) (*hostsCaller, bool, error)
}

func newCmdRalphList(f *factory, runF func(*ralphListOptions) error) *cobra.Command {
	opts := &ralphListOptions{IO: f.IO, Manager: f.Manager,
		Caller: func(s hostSet) (*hostsCaller, bool, error) { return newHostsCaller(f, s) }}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ralph loops",
		Example: `  swarm ralph ls
  swarm ralph list --status running --format names
  swarm ralph list --format json | jq '.[] | {worker_name, current_iteration, status}'
  swarm ralph ls --all-hosts`,
		Args: argsRange(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			if opts.Hosts.any() {
				return runRalphListHosts(opts)
			}
			return runRalphList(opts)
		},
	}
	enumVar(cmd.Flags(), &opts.Format, "format", "table", []string{"table", "json", "names"}, "table, json or names")
	enumVar(cmd.Flags(), &opts.Status, "status", "all", []string{"running", "paused", "stopped", "failed", "all"}, "running, paused, stopped, failed or all")
	addHostSetFlags(cmd.Flags(), &opts.Hosts)
	cmd.MarkFlagsMutuallyExclusive(allHostsFlag, hostsFlag)
	return cmd
}

// listed lists this machine's loops as ralph ls shows them (--status).
func (opts *ralphListOptions) listed() ([]*ralph.Info, error) {
	m, err := opts.Manager()
	if err != nil {
		return nil, err
	}
	live, err := m.List()
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	restore.Mark(m, live) // lost loops' workers, as ls marks them
	infos, err := ralph.DescribeLoops(m, live)
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	var shown []*ralph.Info
	for _, i := range infos {
		if opts.Status == "all" || string(i.State.Status) == opts.Status {
			shown = append(shown, i)
		}
	}
	return shown, nil
}

func runRalphList(opts *ralphListOptions) error {
	shown, err := opts.listed()
	if err != nil {
		return err
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

// printLoopTable prints swarm.py's ralph ls columns, then swarm's.
func printLoopTable(w io.Writer, shown []*ralph.Info) error {
	if len(shown) == 0 {
		return nil
	}
	tw, flush := newTable(w)
	fmt.Fprintln(tw, strings.Join(loopColumns, "\t"))
	for _, i := range shown {
		fmt.Fprintln(tw, strings.Join(loopRowOf(flatten(i)).cells(), "\t"))
	}
	return flush()
}

// loopColumns are ralph ls's columns.
var loopColumns = []string{"NAME", "RALPH_STATUS", "WORKER_STATUS", "ITERATION", "FAILURES", "ELAPSED", "ETA", "LAST-CHANGE", "MONITOR", "REASON", "COST"}

// loopRow is a loop as ralph ls shows it, read from its ralph ls --format
// json object: the same for a loop here and one on a host.
type loopRow struct {
	Name          string   `json:"worker_name"`
	Status        string   `json:"status"`
	ListStatus    string   `json:"list_status"`
	WorkerStatus  string   `json:"worker_status"`
	WorkerLost    bool     `json:"worker_lost"`
	Iteration     int      `json:"current_iteration"`
	MaxIterations int      `json:"max_iterations"`
	Failures      int      `json:"consecutive_failures"`
	TotalFailures int      `json:"total_failures"`
	Elapsed       float64  `json:"elapsed_seconds"`
	AvgIteration  float64  `json:"avg_iteration_seconds"`
	ETA           float64  `json:"eta_seconds"`
	Quiet         float64  `json:"quiet_seconds"`
	Active        bool     `json:"iteration_active"`
	ScreenChange  *string  `json:"last_screen_change"`
	Monitor       string   `json:"monitor"`
	Reason        *string  `json:"exit_reason"`
	ExitCode      *float64 `json:"exit_code"`
	Cost          *float64 `json:"cost_usd"`
}

// loopRowOf reads a loop's JSON object (flatten's, or a host's).
func loopRowOf(obj any) loopRow {
	data, _ := json.Marshal(obj)
	var r loopRow
	_ = json.Unmarshal(data, &r) // json.Marshal's own output; a host's odd field stays zero
	return r
}

// cells are the row's cells: an ETA while the loop has not ended (no
// exit code yet), the last screen change while an iteration runs. Every
// cell is made printable: a host's rows are its say.
func (r loopRow) cells() []string {
	eta, change, reason := "-", "-", "-"
	if r.ExitCode == nil && r.AvgIteration > 0 && r.Monitor != "dead" {
		eta = seconds(r.ETA)
	}
	// A loop with no monitor (lost) has no one watching its screen: its
	// recorded change is not current.
	if r.Active && r.ScreenChange != nil && *r.ScreenChange != "" && r.Monitor != "dead" {
		change = seconds(r.Quiet) + " ago"
	}
	if r.Reason != nil && *r.Reason != "" {
		reason = *r.Reason
	}
	status := r.ListStatus
	if status == "" {
		status = r.Status
	}
	workerStatus := r.WorkerStatus
	if r.WorkerLost {
		workerStatus += "(lost)" // as ls says it
	}
	cost := "-"
	if r.Cost != nil {
		cost = ralph.FormatCost(*r.Cost)
	}
	cells := []string{r.Name, status, workerStatus, fmt.Sprintf("%d/%d", r.Iteration, r.MaxIterations),
		fmt.Sprintf("%d/%d", r.Failures, r.TotalFailures), seconds(r.Elapsed), eta, change, r.Monitor, reason, cost}
	for i, c := range cells {
		cells[i] = termtext.Line(c)
	}
	return cells
}

type ralphLogsOptions struct {
	IO      *IO
	Manager func() (*worker.Manager, error)

	Name  string
	Live  bool
	Lines int // 0: all
	// Iteration, when set, prints that iteration's agent output instead
	// of the events; Agent follows the current iteration's output live.
	Iteration int
	Agent     bool
	// Raw keeps the agent's output as the terminal got it (escape
	// sequences, carriage returns); else it is printed as plain text.
	Raw bool
}

func newCmdRalphLogs(f *factory, runF func(*ralphLogsOptions) error) *cobra.Command {
	opts := &ralphLogsOptions{IO: f.IO, Manager: f.Manager}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a loop's iteration events (START, END, FAIL, TIMEOUT, REJECT, DONE ...) or its agent's output",
		Long: `Print a loop's iteration events, or with --iteration or --agent what its agent
printed. The agent's output is printed as plain text: colours and other escape
sequences, control characters and swarm's end marker are removed, and a line
the agent redrew in place (a progress bar, a spinner) shows as it was last
drawn. --raw prints the output as the terminal received it.`,
		Example: `  swarm ralph logs builder
  swarm ralph logs builder --live
  swarm ralph logs builder --iteration 3    # what the agent printed in iteration 3
  swarm ralph logs builder --iteration 3 --raw > it3.raw   # replay with cat it3.raw
  swarm ralph logs builder --agent          # the agent's output as it comes`,
		Args: argsRange(1, 1, "one loop name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.Raw && opts.Iteration == 0 && !opts.Agent {
				return usagef("--raw needs --iteration or --agent (the events are text already)")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRalphLogs(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Live, "live", false, "keep printing new events until Ctrl-C or the loop ends")
	intVar(cmd.Flags(), &opts.Lines, "lines", defaultRalphLogsLines, 0, noMax, "print at most this many of the latest events (0: all)")
	intVar(cmd.Flags(), &opts.Iteration, "iteration", 0, 0, noMax, "print the agent's output of this iteration (every iteration's is kept, within 1 GiB a loop)")
	cmd.Flags().BoolVar(&opts.Agent, "agent", false, "follow the agent's output of the current iteration live, then the next ones")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "with --iteration or --agent: the output as the terminal got it (escape sequences, carriage returns)")
	cmd.MarkFlagsMutuallyExclusive("iteration", "agent", "live")
	return cmd
}

func runRalphLogs(opts *ralphLogsOptions) error {
	m, err := opts.Manager()
	if err != nil {
		return err
	}
	rs := m.Store.Ralph(opts.Name)
	if err := rs.Err(); err != nil {
		return fail(exitFail, "%v", err)
	}
	if !rs.Exists() {
		return &exitError{code: exitFail, err: hint.Errorf("swarm ralph ls (the loops that have state)",
			"no ralph state found for worker '%s'", opts.Name)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if opts.Iteration > 0 {
		transcript := ralph.TranscriptText // what the terminal showed
		if opts.Raw {
			transcript = ralph.Transcript
		}
		if err := transcript(rs, opts.Iteration, opts.IO.Out); err != nil {
			return &exitError{code: exitFail, err: err}
		}
		return nil
	}
	out := io.Writer(opts.IO.Out)
	if !opts.Raw {
		// Followed live, a line at a time: there is no last screen yet.
		text := termtext.NewWriter(out)
		defer func() { _ = text.Flush() }() // the user's stream, as fmt.Fprint's
		out = text
	}
	switch {
	case opts.Agent:
		if err := ralph.FollowAgent(ctx, rs, out); err != nil {
			return &exitError{code: exitFail, err: err}
		}
	default:
		if err := ralph.Events(ctx, rs, opts.Lines, opts.Live, opts.IO.Out); err != nil {
			return &exitError{code: exitFail, err: err}
		}
	}
	return nil
}
