// Package board is swarm top: a live full-screen board of every worker and
// ralph loop. The pure parts (rows from workers and loops, their order,
// the filter, the plain-text frame) are separate from the Bubble Tea
// program, so swarm top --once and the tests share them with the live
// board.
package board

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

// Kinds of row.
const (
	KindTmux    = "tmux"
	KindProcess = "process"
	KindLoop    = "loop"
)

// Group orders rows: the problems a human has to look at first, then
// what runs, then the rest.
type Group int

// The groups, in board order.
const (
	// GroupUnreachable: a host that could not be asked (swarm top
	// --all-hosts); its last known rows follow, marked stale.
	GroupUnreachable Group = iota
	// GroupFailed: a loop that stopped with status failed.
	GroupFailed
	// GroupAsks: a loop that ended on BLOCKED or DECIDE: the agent
	// needs a human's help or answer to go on.
	GroupAsks
	// GroupDeadMonitor: a loop that has not ended but has no monitor, so
	// nothing drives it (swarm ralph resume starts one).
	GroupDeadMonitor
	// GroupQuiet: the agent's screen has not changed for longer than the
	// loop's inactivity timeout, which the monitor should have acted on.
	GroupQuiet
	// GroupWaiting: the agent hit a usage limit.
	GroupWaiting
	// GroupPaused: a paused loop waits for a human.
	GroupPaused
	// GroupRunning: running workers and loops.
	GroupRunning
	// GroupRest: stopped workers, ended loops.
	GroupRest
)

// Problem reports whether rows of the group need a human.
func (g Group) Problem() bool { return g < GroupRunning }

// Snapshot is everything one refresh of the board read.
type Snapshot struct {
	Live  []worker.Live
	Loops []*ralph.Info
	At    time.Time
	// Hosts are the other hosts' rows (swarm top --all-hosts); with
	// any, this machine's rows are the host Local's.
	Hosts []HostRows
}

// Local is this machine's name in the HOST column.
const Local = "local"

// KindHost is the kind of a host's own row: one that could not be asked.
const KindHost = "host"

// HostRows is what one host answered.
type HostRows struct {
	Host string
	Rows []Row
	// Err says why the host could not be asked ("" when it answered);
	// Rows are then its last known ones, Stale.
	Err string
}

// Row is one line of the board: a worker, or a loop with its worker.
// Its JSON is swarm top --once --format json's, which is how a host's
// rows reach the board of swarm top --all-hosts.
type Row struct {
	// Host is the row's host, "" when the board shows one machine.
	Host   string   `json:"host,omitempty"`
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`   // tmux, process or loop
	Status string   `json:"status"` // the loop's status for loops, else the worker's
	Tags   []string `json:"tags"`
	Group  Group    `json:"group"`
	// Stale: the host could not be asked at the last refresh; this is
	// the row as it was last seen.
	Stale bool `json:"stale,omitempty"`

	// The loop figures below are zero but on a loop's row (IsLoop).
	Iteration     int `json:"iteration"`
	MaxIterations int `json:"max_iterations"`
	// Elapsed is a loop's wall time, or a running worker's uptime.
	Elapsed    time.Duration `json:"elapsed_ns"`
	HasElapsed bool          `json:"has_elapsed"`
	ETA        time.Duration `json:"eta_ns"`
	HasETA     bool          `json:"has_eta"`
	// Quiet is how long the agent's screen has not changed.
	Quiet    time.Duration `json:"quiet_ns"`
	HasQuiet bool          `json:"has_quiet"`
	// Monitor is the pid of a live monitor, "dead" or "-".
	Monitor       string `json:"monitor"`
	Failures      int    `json:"failures"` // consecutive
	TotalFailures int    `json:"total_failures"`
	// Cost is what a loop's agents reported spending, in US dollars (nil:
	// none reported).
	Cost *float64 `json:"cost_usd,omitempty"`
	// Reason is how a loop ended, or "exit N" for a worker whose
	// command exited with a known code.
	Reason string `json:"reason"`
	// HasWorker: the row has a worker record (a loop's may be gone).
	HasWorker bool `json:"has_worker"`
	// Ended: a loop's row, the loop has ended (its agent is gone: its
	// last output is in the loop's state, not on a screen).
	Ended bool `json:"ended"`
	// Detail is what a human needs to read beyond the columns: the
	// reason of a BLOCKED loop, the question of a DECIDE one. Plain
	// text on one line (the agent wrote it).
	Detail string `json:"detail,omitempty"`
}

// IsLoop reports whether the row is a loop's.
func (r Row) IsLoop() bool { return r.Kind == KindLoop }

// Key names the row's worker for the board's Source: NAME on this
// machine, HOST:NAME on another (a worker name has no colon).
func (r Row) Key() string {
	switch {
	case r.Kind == KindHost:
		return "" // nothing to act on
	case r.Host == "" || r.Host == Local:
		return r.Name
	}
	return r.Host + ":" + r.Name
}

// Sanitized returns a row a host sent made safe to show: every text made
// one line of printable text (a host is not trusted to have done it) and
// the group one the board knows.
func (r Row) Sanitized() Row {
	for _, p := range []*string{&r.Name, &r.Kind, &r.Status, &r.Monitor, &r.Reason, &r.Detail} {
		*p = termtext.Line(*p)
	}
	tags := make([]string, len(r.Tags))
	for i, t := range r.Tags {
		tags[i] = termtext.Line(t)
	}
	r.Tags = tags
	if r.Group < GroupUnreachable || r.Group > GroupRest {
		r.Group = GroupRest
	}
	return r
}

// secs converts the float seconds of ralph.Info.
func secs(f float64) time.Duration { return duration.Seconds(f) }

// Build makes one row per worker, a loop's row carrying its loop figures,
// plus a row for each loop whose worker record is gone. now is the time
// the workers' uptime is measured to (the loops' figures are computed by
// ralph when they were read).
func Build(live []worker.Live, loops []*ralph.Info, now time.Time) []Row {
	byName := make(map[string]*ralph.Info, len(loops))
	for _, in := range loops {
		byName[in.State.WorkerName] = in
	}
	rows := make([]Row, 0, len(live)+len(loops))
	seen := make(map[string]bool, len(live))
	for i := range live {
		l := &live[i]
		seen[l.Name] = true
		r := workerRow(l, now)
		if in, ok := byName[l.Name]; ok {
			addLoop(&r, in)
		}
		r.Group = group(&r, byName[l.Name])
		rows = append(rows, r)
	}
	for _, in := range loops {
		if seen[in.State.WorkerName] {
			continue
		}
		r := Row{Name: in.State.WorkerName, Monitor: "-"}
		addLoop(&r, in)
		r.Group = group(&r, in)
		rows = append(rows, r)
	}
	return rows
}

// workerRow is the row of a worker without its loop's figures.
func workerRow(l *worker.Live, now time.Time) Row {
	r := Row{Name: l.Name, Status: l.Status, Tags: l.Tags, Monitor: "-", HasWorker: true}
	if l.Lost {
		// As ls says it: its tmux server went (a reboot), swarm restore
		// brings it back.
		r.Status += lostSuffix
	}
	switch {
	case l.Tmux != nil:
		r.Kind = KindTmux
	default:
		r.Kind = KindProcess
	}
	if l.Running() && !l.Started.IsZero() {
		r.Elapsed, r.HasElapsed = max(0, now.Sub(l.Started.Time)), true
	}
	// A dead pane's status from tmux, or a process worker's from its
	// supervisor.
	if l.HasExit && !l.Running() {
		r.Reason = fmt.Sprintf("exit %d", l.ExitCode)
	}
	return r
}

// addLoop puts a loop's figures on its row, as ralph ls shows them.
func addLoop(r *Row, in *ralph.Info) {
	st := in.State
	r.Kind, r.Status = KindLoop, in.ListStatus() // as ralph ls says it
	if in.WorkerLost {
		r.Status += lostSuffix
	}
	r.Iteration, r.MaxIterations = st.CurrentIteration, st.MaxIterations
	r.Failures, r.TotalFailures = st.ConsecutiveFailures, st.TotalFailures
	r.Monitor = in.MonitorState()
	r.Reason = string(st.ExitReason)
	r.Cost = st.CostUSD
	r.Ended = !st.Active()
	r.Detail = detail(st)
	if !st.Started.IsZero() {
		r.Elapsed, r.HasElapsed = secs(in.Elapsed), true
	}
	if st.Active() && in.AvgIteration > 0 && in.MonitorAlive {
		r.ETA, r.HasETA = secs(in.ETA), true
	}
	if in.Watched() {
		r.Quiet, r.HasQuiet = secs(in.QuietFor), true
	}
}

// lostSuffix marks the status of a worker a killed tmux server or a
// reboot took ("stopped(lost)"), as ls does.
const lostSuffix = "(lost)"

// detail is the line under an ended loop's row that says what the agent
// asks: "blocked: REASON", "question: QUESTION" (ralph status's words).
// The agent wrote the text, so it is made one line of printable text
// (termtext.Line, as every cell is), its runs of spaces squeezed.
func detail(st *state.Ralph) string {
	if st.Active() || st.ExitDetail == "" {
		return ""
	}
	var label string
	switch st.ExitReason {
	case ralph.ReasonBlocked:
		label = "blocked: "
	case ralph.ReasonDecide:
		label = "question: "
	default:
		return ""
	}
	return label + strings.Join(strings.Fields(termtext.Line(string(st.ExitDetail))), " ")
}

// asks reports whether a loop ended asking a human: BLOCKED or DECIDE.
func asks(st *state.Ralph) bool {
	r := st.ExitReason
	return !st.Active() && (r == ralph.ReasonBlocked || r == ralph.ReasonDecide)
}

// group places a row; in is the row's loop, or nil.
func group(r *Row, in *ralph.Info) Group {
	if in == nil {
		if r.Status == state.StatusRunning {
			return GroupRunning
		}
		return GroupRest
	}
	st := in.State
	switch {
	case st.Status == state.RalphFailed:
		return GroupFailed
	case asks(st):
		return GroupAsks
	case in.NotStarted:
		// No monitor is expected until swarm ralph run starts one.
		return GroupRest
	case st.Active() && !in.MonitorAlive:
		return GroupDeadMonitor
	case st.Status == state.RalphRunning && quietTooLong(in):
		return GroupQuiet
	case st.Status == state.RalphWaiting:
		return GroupWaiting
	case st.Status == state.RalphPaused:
		return GroupPaused
	case st.Status == state.RalphRunning:
		return GroupRunning
	}
	return GroupRest
}

// quietTooLong: the screen has been still for longer than the inactivity
// timeout, after which the monitor restarts the agent; still quiet after
// it means the restart did not happen.
func quietTooLong(in *ralph.Info) bool {
	st := in.State
	return st.IterationActive && st.InactivityTimeout.Duration > 0 && !st.LastScreenChange.IsZero() &&
		in.QuietFor > st.InactivityTimeout.Seconds()
}

// Sort orders rows by group (problems first), then by name.
func Sort(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Host, b.Host)
	})
}

// Filter returns the rows whose name, host or one of whose tags contains q,
// ignoring case; an empty q keeps every row.
func Filter(rows []Row, q string) []Row {
	if q == "" {
		return rows
	}
	q = strings.ToLower(q)
	var out []Row
	for _, r := range rows {
		if matches(r, q) {
			out = append(out, r)
		}
	}
	return out
}

func matches(r Row, lowerQ string) bool {
	if strings.Contains(strings.ToLower(r.Name), lowerQ) || strings.Contains(strings.ToLower(r.Host), lowerQ) {
		return true
	}
	for _, t := range r.Tags {
		if strings.Contains(strings.ToLower(t), lowerQ) {
			return true
		}
	}
	return false
}
