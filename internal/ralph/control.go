package ralph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worker"
)

// loadLoop returns the loop state of a worker, with the messages the
// ralph commands print for unknown and non-ralph workers.
func loadLoop(m *worker.Manager, name string) (*state.RalphStore, *state.Ralph, error) {
	rs := m.Store.Ralph(name)
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	st, err := rs.Load()
	if err == nil {
		return rs, st, nil
	}
	if errors.Is(err, state.ErrNoRalph) {
		if _, werr := m.Get(name); werr != nil {
			return nil, nil, werr
		}
		return nil, nil, hint.Errorf("swarm ralph ls lists the loops", "worker '%s' is not a ralph worker", name)
	}
	return nil, nil, err
}

// ErrWarning marks a no-op that commands report as a warning (exit 0).
type ErrWarning struct{ Msg string }

func (w *ErrWarning) Error() string { return w.Msg }

// PauseLoop stops the loop from starting new iterations; the running agent
// continues until its iteration ends.
func PauseLoop(m *worker.Manager, name string) error {
	rs, _, err := loadLoop(m, name)
	if err != nil {
		return err
	}
	var warn, ended string
	_, err = rs.Update(func(s *state.Ralph) error {
		switch s.Status {
		case state.RalphPaused:
			warn = fmt.Sprintf("worker '%s' is already paused", name)
		case state.RalphRunning, state.RalphWaiting:
			s.Status = state.RalphPaused
			s.PauseReason = "paused by user"
		default:
			ended = fmt.Sprintf("ralph loop for '%s' has ended (%s)", name, reasonText(s))
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case ended != "":
		return errors.New(ended)
	case warn != "":
		return &ErrWarning{warn}
	}
	if err := logEvent(rs, EventPause, "paused by user"); err != nil {
		warnf(m, "paused, but %v", err)
	}
	return nil
}

// warnf says what a command could not do beside what it did, through the
// manager's warnings ("swarm: warning: ...").
func warnf(m *worker.Manager, format string, args ...any) {
	if m.Warn != nil {
		m.Warn(fmt.Sprintf(format, args...))
	}
}

// ResumeLoop continues a paused loop from its current iteration, and recovers
// a loop whose monitor died (crash, reboot, SIGKILL): if no monitor is
// alive one is started, and it adopts an agent that is still running. A
// loop stopped before its work was done (failed, pre-flight, killed,
// blocked, decide) resumes too, with its failure count reset; one whose
// work is done (complete, done pattern, done file) or whose cap, time,
// cost or token budget is used up is refused with the way on
// (notResumable). It reports
// a warning when the loop was running with a live monitor.
func ResumeLoop(m *worker.Manager, name string) error {
	rs, st, err := loadLoop(m, name)
	if err != nil {
		return err
	}
	if err := notResumable(name, st, time.Now()); err != nil {
		return err
	}
	// Its agent starts in st.WorkDir again: not in one another user
	// may have made since (after a reboot, say).
	if err := worker.CheckWorkDir(st.WorkDir, fmt.Sprintf("swarm ralph spawn --name %s --replace ... from a directory of your own", name)); err != nil {
		return err
	}
	// A lock held by no live monitor (a dead monitor's descriptor in a
	// child it was forking) must not pass for a running monitor: the loop
	// would be left with none.
	settleMonitorLock(rs)
	// Set running and look for a live monitor in one locked step: a
	// monitor on its way out makes the same check under the same lock
	// (Engine.stayForResume), so it either carries on or is seen gone.
	var alive, wasActive, warn bool
	_, err = rs.Update(func(s *state.Ralph) error {
		// Under the loop's lock, as clean's removal of the record is
		// (Hooks.RemoveUnlessLoopHolds): a cleaned worker is not resumed.
		if _, err := m.Get(name); err != nil {
			return err
		}
		alive = MonitorAlive(rs)
		wasActive = s.Active()
		if s.Runs() && alive {
			warn = true
			return errNoChange
		}
		if !s.Active() {
			s.ConsecutiveFailures = 0
			s.ExitReason, s.ExitDetail, s.ExitHint = "", "", ""
			s.CapIncomplete = false
		}
		s.Status = state.RalphRunning
		s.PauseReason = ""
		return nil
	})
	if warn {
		return &ErrWarning{fmt.Sprintf("worker '%s' is not paused", name)}
	}
	if err != nil {
		return err
	}
	if st.DoneFile != "" {
		// The agent asked to wait with a WAIT file; resuming answers it.
		if err := os.Remove(waitFilePath(st)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warnf(m, "resumed, but the agent's WAIT file stays: %v", err)
		}
	}
	if wasActive {
		err = logEvent(rs, EventResume, "resumed at iteration %d", st.CurrentIteration)
	} else {
		err = logEvent(rs, EventResume, "resumed at iteration %d after it had ended (%s)", st.CurrentIteration, reasonText(st))
	}
	if err != nil {
		warnf(m, "resumed, but %v", err)
	}
	if !alive {
		if _, err := StartMonitor(m, name); err != nil {
			return err
		}
	}
	return nil
}

// notResumable refuses to resume a loop that ended with nothing left to
// do: resuming it would run its agent again on finished work and spend
// iterations. The hint says how to go on instead.
func notResumable(name string, st *state.Ralph, now time.Time) error {
	if st.Active() {
		return nil
	}
	if accepted(st.ExitReason) {
		return hint.Errorf(fmt.Sprintf("to run it again from the start: swarm ralph spawn --name %s --replace --prompt-file %s -- COMMAND (swarm ralph status %s shows how it ended)", name, st.PromptFile, name),
			"ralph loop for '%s' has ended (%s); there is nothing to resume", name, reasonText(st))
	}
	if !st.IterationActive && st.CurrentIteration >= st.MaxIterations {
		return hint.Errorf(fmt.Sprintf("swarm ralph set %s --max-iterations %d, then: swarm ralph resume %s", name, st.MaxIterations+10, name),
			"ralph loop for '%s' already ran all %d iterations", name, st.MaxIterations)
	}
	if st.MaxTime.Duration > 0 && now.Sub(st.Started.Time) >= st.MaxTime.Duration {
		return hint.Errorf(fmt.Sprintf("give it more time: swarm ralph set %s --max-time DURATION, then: swarm ralph resume %s", name, name),
			"ralph loop for '%s' has used its time budget (%s)", name, duration.Words(st.MaxTime.Duration))
	}
	// The budgets as capReached counts them: resumed, the loop would stop
	// again before its next iteration with nothing run, after saying it
	// resumed. Raised (ralph set), it resumes: the hint offers another
	// budget's worth past what was spent (no "$": a shell would expand it).
	if reason, over := budgetUsedUp(st); over {
		if reason == ReasonMaxCost {
			return hint.Errorf(fmt.Sprintf("raise it: swarm ralph set %s --max-cost %s, then: swarm ralph resume %s", name, strings.TrimPrefix(FormatCost(st.Cost()+st.MaxCost), "$"), name),
				"ralph loop for '%s' has used its cost budget (%s, spent %s)", name, FormatCost(st.MaxCost), FormatCost(st.Cost()))
		}
		return hint.Errorf(fmt.Sprintf("raise it: swarm ralph set %s --max-tokens %d, then: swarm ralph resume %s", name, st.Tokens()+st.MaxTokens, name),
			"ralph loop for '%s' has used its token budget (%d, spent %d)", name, st.MaxTokens, st.Tokens())
	}
	return nil
}

// budgetUsedUp names the cost or token budget the loop has used up, as
// the engine judges it before an iteration (capReached).
func budgetUsedUp(st *state.Ralph) (state.ExitReason, bool) {
	return capReached(Outcome{}, Snapshot{Usage: st.Usage, MaxCost: st.MaxCost, MaxTokens: st.MaxTokens})
}

// UnpauseForRun sets a paused loop without a live monitor running again,
// because a user who runs swarm ralph run wants the loop to run.
func UnpauseForRun(m *worker.Manager, name string) {
	rs := m.Store.Ralph(name)
	if st, err := rs.Load(); err != nil || st.Status != state.RalphPaused || MonitorAlive(rs) {
		return
	}
	unpaused := false
	_, err := rs.Update(func(s *state.Ralph) error {
		if s.Status == state.RalphPaused {
			s.Status, s.PauseReason, unpaused = state.RalphRunning, "", true
		}
		return nil
	})
	if err != nil {
		warnf(m, "cannot resume the paused loop '%s': %v", name, err)
	}
	if unpaused {
		if err := logEvent(rs, EventResume, "resumed by ralph run"); err != nil {
			warnf(m, "resumed, but %v", err)
		}
	}
}

var errNoChange = errors.New("no change")

// StopLoop ends a loop for good (swarm ralph stop = swarm kill, with its
// worktree options).
func StopLoop(m *worker.Manager, name string, o worker.KillOptions) error {
	if _, _, err := loadLoop(m, name); err != nil {
		return err
	}
	return m.Kill(name, o)
}

// markKilled ends an active loop with reason killed, so its monitor starts
// no further iteration. It returns what it could not write: the state, or
// the DONE line.
func markKilled(rs *state.RalphStore) error {
	var logErr error
	_, err := rs.Update(func(s *state.Ralph) error {
		if !s.Active() {
			return nil
		}
		s.Status = state.RalphStopped
		s.ExitReason = ReasonKilled
		s.ExitDetail = ""
		// Before the state is written, as the monitor's own end does.
		logErr = logEvent(rs, EventDone, "%s", doneText(s.CurrentIteration, ReasonKilled))
		return nil
	})
	if errors.Is(err, state.ErrNoRalph) {
		err = nil // no loop (a spawn undone before its state was made): nothing to end
	}
	return errors.Join(err, logErr)
}

// Hooks connect worker kills and cleans to ralph loops.
type Hooks struct{ m *worker.Manager }

// NewHooks returns the hooks for m.
func NewHooks(m *worker.Manager) *Hooks { return &Hooks{m: m} }

// BeforeKill marks the loop killed before its agent is stopped.
func (h *Hooks) BeforeKill(w *state.Worker) error {
	rs := h.m.Store.Ralph(w.Name)
	if rs.Exists() {
		if err := markKilled(rs); err != nil {
			warnf(h.m, "cannot mark the ralph loop of '%s' killed (its monitor may start another iteration): %v", w.Name, err)
		}
	}
	return nil
}

// AfterKill waits for the loop's monitor to notice and exit, so that when
// kill returns no monitor drives the worker any more.
func (h *Hooks) AfterKill(w *state.Worker) {
	rs := h.m.Store.Ralph(w.Name)
	if !rs.Exists() {
		return
	}
	// The monitor gives up its lock as its last act; its process ends a
	// moment later. Note which process it is while it holds the lock.
	var mon proc.Target
	if st, err := rs.Load(); err == nil && st.MonitorPID > 0 && MonitorAlive(rs) {
		mon, _ = proc.Identify(st.MonitorPID)
	}
	wait := killWait(worker.PollInterval(DefaultPoll))
	resumed := false
	exited := clock.Wait(context.Background(), clock.Real, monitorExitPoll, wait, func() bool {
		if !MonitorAlive(rs) {
			return true
		}
		// Resumed since the kill (ralph resume): the monitor carries on
		// (Engine.stayForResume), and the kill has nothing to wait for.
		st, err := rs.Load()
		resumed = err == nil && st.Active()
		return resumed
	})
	if resumed {
		return
	}
	if !exited {
		if h.m.Warn != nil {
			h.m.Warn(fmt.Sprintf("the ralph monitor of '%s' did not exit within %s", w.Name, wait))
		}
		return
	}
	clock.Wait(context.Background(), clock.Real, monitorExitPoll, monitorExitAfterUnlock, func() bool { return mon.PID <= 0 || !mon.Alive() })
}

// AfterClean keeps the loop's state: as with swarm.py, only ralph clean
// (or ralph spawn --clean-state / --replace) removes it, so a loop's
// history outlives its worker's record.
func (h *Hooks) AfterClean(name string) {}

// LoopActive reports whether the worker has a loop that has not ended (it
// may be between iterations, or its monitor may be dead).
func (h *Hooks) LoopActive(name string) bool {
	rs := h.m.Store.Ralph(name)
	if !rs.Exists() {
		return false
	}
	st, err := rs.Load()
	return err == nil && st.Active()
}

// LoopHolds returns the loop's status if clean must leave its worker (see
// holds), "" otherwise.
func (h *Hooks) LoopHolds(name string) string {
	rs := h.m.Store.Ralph(name)
	if !rs.Exists() {
		return ""
	}
	st, err := rs.Load()
	if err != nil || !holds(rs, st) {
		return ""
	}
	return string(st.Status)
}

// holds reports whether a loop holds its worker against clean: it has not
// ended, and it has started (an iteration ran or runs, or a monitor is
// alive). A loop made with --no-run and never run does not: it is cleaned
// like any stopped worker, as swarm.py cleans it, and a monitor started
// for it later finds no record when it claims its first iteration.
func holds(rs *state.RalphStore, st *state.Ralph) bool {
	return st.Active() && (st.CurrentIteration > 0 || st.IterationActive || MonitorAlive(rs))
}

// RemoveUnlessLoopHolds runs remove (clean's removal of the worker record)
// under the loop's state lock, unless the loop holds the worker. Both
// ResumeLoop, before it sets a loop running, and the monitor, before it
// claims an iteration, check under the same lock that the record is
// there: either the clean comes first and they find no worker, or they do
// and the clean is refused. A worker without a loop, or whose loop state
// cannot be read (and so cannot run), is removed as it is.
func (h *Hooks) RemoveUnlessLoopHolds(name string, remove func() error) error {
	rs := h.m.Store.Ralph(name)
	if !rs.Exists() {
		return remove()
	}
	var tried bool
	var removeErr error
	_, err := rs.Update(func(s *state.Ralph) error {
		if holds(rs, s) {
			return &worker.LoopHoldsError{Status: string(s.Status)}
		}
		tried = true
		if removeErr = remove(); removeErr != nil {
			return removeErr
		}
		return errNoChange
	})
	var held *worker.LoopHoldsError
	switch {
	case tried:
		return removeErr
	case errors.As(err, &held):
		return err
	}
	if _, lerr := rs.Load(); lerr != nil {
		return remove()
	}
	return err
}

// CleanLoop removes the ralph state of a loop that is not running.
func CleanLoop(m *worker.Manager, name string) error {
	rs := m.Store.Ralph(name)
	if err := rs.Err(); err != nil {
		return err
	}
	if !rs.Exists() {
		// Only ever remove a directory that is a loop's.
		return fmt.Errorf("no ralph state for '%s'", name)
	}
	if MonitorAlive(rs) {
		return fmt.Errorf("cannot clean ralph loop '%s' while its monitor runs (stop it first: swarm ralph stop %s)", name, name)
	}
	return rs.Remove()
}

// CleanAllLoops removes the state of every loop without a live monitor.
func CleanAllLoops(m *worker.Manager) ([]string, error) {
	names, err := m.Store.RalphNames()
	if err != nil {
		return nil, err
	}
	var cleaned []string
	for _, n := range names {
		if CleanLoop(m, n) == nil {
			cleaned = append(cleaned, n)
		}
	}
	return cleaned, nil
}

// WaitResult is how a waited-for loop ended.
type WaitResult struct {
	State    *state.Ralph
	Code     int
	TimedOut bool
}

// WaitLoop blocks until the loop ends and returns its exit code. A loop whose
// monitor is dead while it should be running is reported as an error (it
// would never end by itself: resume it).
func WaitLoop(ctx context.Context, m *worker.Manager, name string, timeout time.Duration) (WaitResult, error) {
	rs, _, err := loadLoop(m, name)
	if err != nil {
		return WaitResult{}, err
	}
	if timeout <= 0 {
		timeout = clock.Forever
	}
	var res WaitResult
	var werr error
	dead := 0 // consecutive looks without a live monitor
	ended := clock.Wait(ctx, clock.Real, worker.PollInterval(time.Second), timeout, func() bool {
		st, err := rs.Load()
		if err != nil {
			res, werr = WaitResult{}, err
			return true
		}
		res.State = st
		if !st.Active() {
			res.Code = LoopExitCode(st)
			return true
		}
		if MonitorAlive(rs) {
			dead = 0
		} else if dead++; dead >= deadMonitorLooks && st.Runs() {
			// Checked a few times: a monitor being restarted is briefly
			// absent.
			werr = fmt.Errorf("the monitor of ralph loop '%s' is not running; resume it with: swarm ralph resume %s", name, name)
			return true
		}
		return false
	})
	switch {
	case ended:
		return res, werr
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	res.TimedOut = true
	return res, nil
}

// Info is a loop's status as ralph status and ralph ls show it: its state
// and the figures computed from it. One function (describe) computes them
// for both commands, so the two always agree.
type Info struct {
	State        *state.Ralph `json:"state"`
	MonitorAlive bool         `json:"monitor_alive"`
	// WorkerStatus is the worker's live status: running, stopped, or
	// removed when its record is gone (swarm.py's ralph ls column).
	WorkerStatus string `json:"worker_status"`
	// Elapsed is the loop's wall time so far (to its last iteration's
	// end once it has ended); AvgIteration the mean iteration duration;
	// ETA an estimate of the time left at that pace (0 once ended).
	Elapsed      float64 `json:"elapsed_seconds"`
	AvgIteration float64 `json:"avg_iteration_seconds"`
	ETA          float64 `json:"eta_seconds"`
	// QuietFor is how long the agent's screen has not changed (0 when no
	// iteration runs).
	QuietFor float64 `json:"quiet_seconds"`
	// NotStarted: made with --no-run and never run (swarm ralph run).
	NotStarted bool     `json:"not_started"`
	LastOutput []string `json:"last_output,omitempty"`
	// LastOutputIteration: LastOutput is the end of that iteration's
	// kept output (a failed loop's, its agent gone), not the screen.
	LastOutputIteration int `json:"last_output_iteration,omitempty"`
	// Profile is the agent profile the loop judges its agent's screens
	// with: --agent's, else the one its command chose ("" when neither
	// is known: the worker's record is gone).
	Profile string `json:"profile,omitempty"`
	// WorkerLost: the worker's window went with its tmux server (a
	// reboot): swarm restore brings it back (worker.Live.Lost).
	WorkerLost bool `json:"worker_lost,omitempty"`
	// PaneAlive: the worker's window exists and its agent runs (a loop's
	// dead pane stays between iterations, its worker still "running").
	PaneAlive bool `json:"pane_alive"`
	// At is when the figures were computed (zero: now).
	At time.Time `json:"-"`
}

// ListStatus is the status column of ralph ls and swarm top: the loop's
// status, "not-started" for a loop made with --no-run and never run, and
// for a loop waiting out a usage limit when it resets ("waiting until
// 15:04").
func (i *Info) ListStatus() string {
	st := i.State
	switch {
	case i.NotStarted:
		return "not-started"
	case st.Status == state.RalphWaiting && !st.WaitingUntil.IsZero():
		return "waiting until " + ResetTime(st.WaitingUntil.Time, i.now())
	}
	return string(st.Status)
}

// now is when the figures were computed.
func (i *Info) now() time.Time {
	if i.At.IsZero() {
		return time.Now()
	}
	return i.At
}

// ResetTime renders when a usage limit resets, in local time: the clock
// time on the same day as now ("15:04"), else with the date ("Mar 5
// 09:00": weekly limits reset days later).
func ResetTime(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// MonitorState is the monitor column: the pid of a live monitor, "dead"
// for a loop that should have one and has none, "-" for an ended loop.
func (i *Info) MonitorState() string {
	switch {
	case i.MonitorAlive:
		return fmt.Sprint(i.State.MonitorPID)
	case i.State.Active() && !i.NotStarted:
		return "dead"
	}
	return "-"
}

// NotStarted reports whether a loop was made with --no-run and never run
// (swarm ralph run starts it): it is set running with no iteration, and
// no monitor ever recorded itself in it. A monitor writes its pid before
// anything else and clears it only once the loop has stopped or paused,
// so a loop whose monitor died before its first iteration (a reboot right
// after the spawn) is lost, not this. The state is what swarm.py writes
// for --no-run: nothing new is recorded. The caller checks that no
// monitor is alive.
func NotStarted(st *state.Ralph) bool {
	return st.Status == state.RalphRunning && st.CurrentIteration == 0 && !st.IterationActive && st.MonitorPID == 0
}

// describe computes a loop's figures at now; l is the loop's worker as
// just listed, nil when its record is gone.
func describe(rs *state.RalphStore, st *state.Ralph, l *worker.Live, now time.Time) *Info {
	info := &Info{State: st, MonitorAlive: MonitorAlive(rs), WorkerStatus: "removed", At: now}
	info.Profile = st.Agent
	if l != nil {
		info.WorkerStatus, info.WorkerLost = l.Status, l.Lost
		info.PaneAlive = l.WindowID != "" && !l.PaneDead
		if !slices.Contains(agent.Names(), st.Agent) { // named without building a profile
			info.Profile = agent.NameFor(l.Cmd)
		}
	}
	info.NotStarted = NotStarted(st) && !info.MonitorAlive
	if !st.Started.IsZero() {
		end := now
		if !st.Active() && !st.LastIterationEnd.IsZero() {
			end = st.LastIterationEnd.Time
		}
		info.Elapsed = max(0, end.Sub(st.Started.Time).Seconds())
	}
	if n := len(st.IterationDurations); n > 0 {
		sum := 0.0
		for _, d := range st.IterationDurations {
			sum += d
		}
		info.AvgIteration = sum / float64(n)
		// An estimate only while a monitor drives the loop: a lost
		// one's would stay "1s" all night.
		if st.Active() && info.MonitorAlive {
			left := float64(st.MaxIterations - st.CurrentIteration)
			if st.IterationActive {
				left += max(0, 1-now.Sub(st.LastIterationStart.Time).Seconds()/info.AvgIteration)
			}
			info.ETA = max(0, left) * info.AvgIteration
		}
	}
	if info.Watched() {
		info.QuietFor = max(0, now.Sub(st.LastScreenChange.Time).Seconds())
	}
	return info
}

// Watched reports whether the loop's monitor watches an agent's screen
// now, so the last screen change is current: an iteration runs and a
// monitor is alive. A lost loop's recorded change grows older with no
// screen behind it.
func (i *Info) Watched() bool {
	st := i.State
	return st.IterationActive && i.MonitorAlive && !st.LastScreenChange.IsZero()
}

// LoopStatus gathers a loop's status, with the last screen lines when
// the agent has been quiet for over a minute.
func LoopStatus(m *worker.Manager, name string) (*Info, error) {
	rs, st, err := loadLoop(m, name)
	if err != nil {
		return nil, err
	}
	var live *worker.Live
	if l, err := m.Status(name); err == nil {
		live = l
	}
	info := describe(rs, st, live, time.Now())
	if info.QuietFor > quietShowsOutput.Seconds() {
		if text, err := m.Peek(name, lastOutputLines); err == nil {
			info.LastOutput = splitLines(text)
		}
	}
	if st.Status == state.RalphFailed && len(info.LastOutput) == 0 {
		info.LastOutputIteration, info.LastOutput = lastWords(rs, lastOutputLines)
	}
	return info, nil
}

// ListLoops returns the status of every loop, refreshing the workers'
// status with one tmux listing for all of them.
func ListLoops(m *worker.Manager) ([]*Info, error) {
	live, err := m.List()
	if err != nil {
		return nil, err
	}
	return DescribeLoops(m, live)
}

// DescribeLoops returns the status of every loop given the workers as
// m.List just returned them (swarm top lists once for both).
func DescribeLoops(m *worker.Manager, live []worker.Live) ([]*Info, error) {
	names, err := m.Store.RalphNames()
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*worker.Live, len(live))
	for i := range live {
		byName[live[i].Name] = &live[i]
	}
	now := time.Now()
	var out []*Info
	for _, n := range names {
		rs := m.Store.Ralph(n)
		st, err := rs.Load()
		if err != nil {
			continue
		}
		out = append(out, describe(rs, st, byName[n], now))
	}
	return out, nil
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Settings are what swarm ralph set changes on a loop; nil leaves a
// setting as it is.
type Settings struct {
	MaxIterations     *int
	InactivityTimeout *time.Duration
	MaxTime           *time.Duration
	MaxCost           *float64
	MaxTokens         *int64
}

// checkSetBudgets refuses, as spawn does, a budget the loop's agent
// cannot be held to (CheckBudgets).
func checkSetBudgets(m *worker.Manager, st *state.Ralph, set Settings) error {
	if set.MaxCost == nil && set.MaxTokens == nil {
		return nil
	}
	var cmd []string
	if w, err := m.Get(st.WorkerName); err == nil {
		cmd = w.Cmd
	}
	cfg, err := m.Store.Config()
	if err != nil {
		return err
	}
	var maxCost float64
	var maxTokens int64
	if set.MaxCost != nil {
		maxCost = *set.MaxCost
	}
	if set.MaxTokens != nil {
		maxTokens = *set.MaxTokens
	}
	return CheckBudgets(maxCost, maxTokens, profileFor(st.Agent, cmd), cfg)
}

// SetLoop changes a loop's settings through the locked state update. The
// monitor reads them at its next decision (the cap, the budget) or next
// iteration (the inactivity timeout). It returns the new state.
func SetLoop(m *worker.Manager, name string, set Settings) (*state.Ralph, error) {
	rs, cur, err := loadLoop(m, name)
	if err != nil {
		return nil, err
	}
	if err := checkSetBudgets(m, cur, set); err != nil {
		return nil, err
	}
	var changes []string
	st, err := rs.Update(func(s *state.Ralph) error {
		changes = changes[:0]
		if set.MaxIterations != nil {
			s.MaxIterations = *set.MaxIterations
			changes = append(changes, fmt.Sprintf("max_iterations=%d", s.MaxIterations))
		}
		if set.InactivityTimeout != nil {
			s.InactivityTimeout = state.WholeSeconds{Duration: *set.InactivityTimeout}
			changes = append(changes, fmt.Sprintf("inactivity_timeout=%ds", s.InactivityTimeout.Int()))
		}
		if set.MaxTime != nil {
			s.MaxTime = state.Seconds{Duration: *set.MaxTime}
			changes = append(changes, "max_time="+duration.Compact(*set.MaxTime))
		}
		if set.MaxCost != nil {
			s.MaxCost = *set.MaxCost
			changes = append(changes, "max_cost="+FormatCost(s.MaxCost))
		}
		if set.MaxTokens != nil {
			s.MaxTokens = *set.MaxTokens
			changes = append(changes, fmt.Sprintf("max_tokens=%d", s.MaxTokens))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := logEvent(rs, EventSet, "%s", strings.Join(changes, " ")); err != nil {
		warnf(m, "set, but %v", err)
	}
	return st, nil
}
