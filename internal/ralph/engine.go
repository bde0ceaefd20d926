package ralph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/daemon"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

// Tmux is what the loop needs from a tmux server. *tmux.Client implements
// it; the engine's unit tests use a fake.
type Tmux interface {
	ListPanes() ([]tmux.Pane, error)
	Lookup(session, name string) (tmux.Window, bool, error)
	NewWindow(spec tmux.WindowSpec) (string, error)
	KillWindow(target string) error
	Respawn(target string, spec tmux.RespawnSpec) error
	Poll(target string) (tmux.PaneStatus, string, error)
	// ServerID is the identity of the server answering now
	// (tmux.PaneStatus.Server).
	ServerID() (string, error)
	// Capture reads the pane with its history: what a promise tag of a
	// redrawn stream is confirmed on (Detector.Confirm).
	Capture(target string, o tmux.CaptureOptions) (string, error)
	PipeTo(target, path string, via []string) error
	Paste(target, text string) error
	worker.Keyboard
}

// Engine runs one loop. It is the monitor: the background process started
// by StartMonitor, or the foreground command (ralph run, --foreground).
type Engine struct {
	Name string
	M    *worker.Manager
	RS   *state.RalphStore
	// Out receives the loop's "[ralph] N: ..." lines.
	Out io.Writer
	// Timestamps starts each of those lines with the time (RFC 3339, as
	// the heartbeat's log lines and the monitor's start line): a
	// background monitor's output is monitor.log, read after the fact. A
	// loop run in a terminal prints swarm.py's lines as they are.
	Timestamps bool
	// Poll paces the watch of the agent (2 s; $SWARM_POLL_INTERVAL).
	Poll time.Duration
	// ReadyPoll paces ready detection (0.5 s or Poll if shorter).
	ReadyPoll time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL of the agent.
	StopGrace time.Duration
	// TmuxFor returns the client of a tmux server (worker.Server): by
	// default a tmux.Poller, whose polls go through one control-mode
	// client instead of a tmux process each (pollers).
	TmuxFor func(s tmux.Server) Tmux
	// Clock is where the loop takes its time from: its polls, timeouts,
	// backoffs and timestamps (clock.Real; tests run the engine in a
	// testing/synctest bubble).
	Clock clock.Clock
	// LogSink, when set, is the capping sink the agent's output is piped
	// through (swarm _logpipe --max N); without it, cat appends uncapped.
	LogSink func(max int64) []string
	// Hooks are the command lines an agent runs to report its events and
	// status line to the loop (cmd/swarm's _event); without them the
	// loop reads the agent's screen alone.
	Hooks agent.HookCommands
	// Trim, when set, is called after the first poll of each watch of an
	// agent, its launch, the prompt's delivery and the first judgement of
	// its screen behind it: a background monitor gives back there the
	// memory its start-up and the launch used (cmd/swarm: memtrim.Trim).
	// It is called once per watch, never per poll; its first error is
	// said, the loop goes on.
	Trim func() error

	pauseAndExit atomic.Bool
	lastPersist  time.Time // when last_screen_change was last written
	persisted    time.Time // the value written
	// writeFailed is set when a state write failed (a full disk, say)
	// and cleared by the next one that succeeds: the monitor then backs
	// off instead of spinning through its loop.
	writeFailed atomic.Bool
	// endedAt is when the last iteration ended (its END line): the pause
	// before the next one (--restart-delay, a backoff) counts from there,
	// stopping the agent included.
	endedAt time.Time
	// known is the worker record as drive last read it: finish closes
	// its window even if the record has gone since.
	known *state.Worker
	// patterns are the loop's own screen patterns (compiled).
	patterns *userPatterns
	// noCostWarned: the loop has a cost budget and was told once that
	// its agent reports no cost.
	noCostWarned bool
	// pollers are the default TmuxFor's, closed when Run returns.
	pollers *tmux.Pollers
	// trimFailed: Trim failed once, and that was said.
	trimFailed bool
}

// NewEngine returns the engine for the loop of worker name.
func NewEngine(m *worker.Manager, name string, out io.Writer) *Engine {
	poll := worker.PollInterval(DefaultPoll)
	pollers := &tmux.Pollers{Exclusive: m.HoldWindows}
	return &Engine{
		Name: name, M: m, RS: m.Store.Ralph(name), Out: out,
		Poll: poll, ReadyPoll: min(poll, MaxReadyPoll), StopGrace: DefaultStopGrace,
		TmuxFor: func(s tmux.Server) Tmux { return pollers.For(s) },
		Clock:   clock.Real, pollers: pollers,
	}
}

// logSink is the pipe-pane program for the loop's output log.
func (e *Engine) logSink(st *state.Ralph) []string {
	if e.LogSink == nil {
		return nil
	}
	return e.LogSink(logMax(st))
}

// RequestPause asks the engine to pause the loop once the current
// iteration ends, and then to exit (SIGTERM to a monitor).
func (e *Engine) RequestPause() {
	if e.pauseAndExit.Swap(true) {
		return
	}
	paused := false
	_, err := e.RS.Update(func(s *state.Ralph) error {
		if s.Runs() {
			s.Status = state.RalphPaused
			s.PauseReason = "monitor received SIGTERM"
			paused = true
		}
		return nil
	})
	if err == nil && paused {
		e.log(EventPause, "monitor received SIGTERM; pausing after the current iteration")
		e.say("received SIGTERM, pausing after the current iteration")
	}
}

// say writes a line of the loop's output: "[ralph] N: text", after the
// time with Timestamps.
func (e *Engine) say(format string, args ...any) {
	line := fmt.Sprintf("[ralph] %s: %s\n", e.Name, fmt.Sprintf(format, args...))
	if e.Timestamps {
		line = clock.Or(e.Clock).Now().Format(time.RFC3339) + " " + line
	}
	fmt.Fprint(e.Out, line)
}

// log appends an event to iterations.log; a failed write is reported in
// the monitor's own output rather than lost.
func (e *Engine) log(event state.Event, format string, args ...any) {
	if err := logEvent(e.RS, event, format, args...); err != nil {
		e.say("cannot write iterations.log: %v", err)
	}
	e.noteEvent(event, fmt.Sprintf(format, args...)) // notifications (lifecycle.go)
}

// update is a locked read-modify-write of the loop state; a failure is
// reported in the monitor's output and returned.
func (e *Engine) update(fn func(*state.Ralph) error) (*state.Ralph, error) {
	st, err := e.RS.Update(fn)
	switch {
	case err == nil:
		e.writeFailed.Store(false)
	case !errors.Is(err, errSkip):
		e.writeFailed.Store(true)
		e.say("cannot update the loop state: %v", err)
	}
	return st, err
}

// record is update for a write the loop goes on without: update says
// when it fails (and marks the state unwritten), so nothing is returned.
func (e *Engine) record(fn func(*state.Ralph) error) {
	_, _ = e.update(fn) // said by update
}

// ErrLoopEnded is returned by Run for a loop that is already over.
var ErrLoopEnded = errors.New("loop has ended")

// Run drives the loop until it ends, and returns the loop's exit code
// (see ExitCode). ctx being canceled means Ctrl-C: the agent is stopped and
// the loop ends as interrupted (130). A returned error is printed by the
// caller as "swarm: error: ..." (prompt file gone, pre-flight failure).
func (e *Engine) Run(ctx context.Context) (int, error) {
	lock, err := e.takeMonitorLock()
	if err != nil {
		return 1, err
	}
	defer func() {
		if err := lock.Release(); err != nil {
			e.say("cannot release the monitor lock: %v", err)
		}
	}()
	if e.pollers != nil {
		defer e.pollers.Close()
	}
	st, err := e.RS.Update(func(s *state.Ralph) error {
		if !s.Active() {
			if err := notResumable(e.Name, s, e.Clock.Now()); err != nil {
				return err
			}
			return fmt.Errorf("ralph loop for '%s' has ended (%s); resume it with: swarm ralph resume %s", e.Name, reasonText(s), e.Name)
		}
		s.MonitorPID = os.Getpid()
		return nil
	})
	if err != nil {
		if errors.Is(err, state.ErrNoRalph) {
			return 1, fmt.Errorf("worker '%s' is not a ralph worker", e.Name)
		}
		return 1, err
	}
	e.RS.KeepFallback(st)
	backoff := time.Duration(0)
	for {
		code, err := e.drive(ctx)
		e.record(func(s *state.Ralph) error {
			if s.MonitorPID == os.Getpid() {
				s.MonitorPID = 0
			}
			return nil
		})
		if ctx.Err() != nil || !e.stayForResume(lock) {
			return code, err
		}
		if e.writeFailed.Load() {
			// The loop could not record its end (a full disk): wait
			// before trying again, longer each time, instead of
			// spinning through iterations every poll.
			backoff = min(max(2*backoff, e.Poll), maxWriteBackoff)
			e.say("cannot write the loop state; trying again in %s", duration.Compact(backoff))
			e.Clock.Sleep(ctx, backoff)
			continue
		}
		backoff = 0
		e.pauseAndExit.Store(false)
		e.record(func(s *state.Ralph) error { s.MonitorPID = os.Getpid(); return nil })
		e.say("resumed while the monitor was stopping; continuing")
	}
}

// maxWriteBackoff caps the monitor's wait between attempts when the loop
// state cannot be written.
const maxWriteBackoff = time.Minute

// takeMonitorLock takes the loop's monitor lock, with the messages the
// commands print when there is no loop or a monitor already runs.
func (e *Engine) takeMonitorLock() (*daemon.Held, error) {
	lock, err := lockMonitor(e.RS)
	switch {
	case err == nil:
		return lock, nil
	case errors.Is(err, state.ErrNoRalph):
		if _, werr := e.M.Get(e.Name); werr != nil {
			return nil, werr
		}
		return nil, fmt.Errorf("worker '%s' is not a ralph worker", e.Name)
	case errors.Is(err, errMonitorRunning):
		pid := 0
		if st, lerr := e.RS.Load(); lerr == nil {
			pid = st.MonitorPID
		}
		return nil, fmt.Errorf("a monitor is already running for '%s' (pid %d)", e.Name, pid)
	}
	return nil, err
}

// stayForResume is the monitor's last act: unless the loop was set running
// again meanwhile (swarm ralph resume), it gives up the monitor lock. Both
// happen under the state lock, and resume sets running and probes the
// monitor lock under it too: either resume sees this monitor gone and
// starts another, or this monitor sees the resume and carries on. A loop is
// never left running with no monitor.
//
// Nothing is written after the lock is given up: a command that waited for
// this monitor to go (kill, --replace) may already be reusing the files.
func (e *Engine) stayForResume(lock *daemon.Held) bool {
	stay := false
	err := e.RS.View(func(s *state.Ralph) {
		if s.Status == state.RalphRunning {
			stay = true
			return
		}
		if err := lock.Release(); err != nil {
			e.say("cannot release the monitor lock: %v", err)
		}
	})
	return err == nil && stay
}

// drive runs the loop until it ends, pauses for good (SIGTERM) or is
// interrupted. Each turn: look at the loop and the worker, handle what
// needs no agent, else run one iteration and act on its decision.
func (e *Engine) drive(ctx context.Context) (int, error) {
	for {
		st, err := e.RS.Load()
		if err != nil {
			return 1, err
		}
		w, err := e.M.Get(e.Name)
		if err == nil {
			e.known = w
		}
		if errors.Is(err, worker.ErrNotFound) {
			// The worker record is gone (cleaned): nothing left to drive.
			return e.finish(Decision{Action: Stop, Status: state.RalphStopped, Reason: ReasonKilled, Detail: "worker record removed"}, st)
		}
		if err != nil {
			e.say("cannot read the worker record (%v); retrying", err)
			e.Clock.Sleep(ctx, e.Poll)
			continue
		}
		if ctx.Err() != nil {
			return e.finish(Decision{Action: Stop, Status: state.RalphStopped, Reason: ReasonInterrupted}, st)
		}
		switch step, code, err := e.between(ctx, st, w); step {
		case stepEnd:
			return code, err
		case stepAgain:
			continue
		}
		d, ran := e.iteration(ctx, st, w)
		switch {
		case !ran:
			// Paused or stopped before an agent could start: look again
			// after a poll (never spin).
			e.Clock.Sleep(ctx, e.Poll)
		case d.Action == Stop:
			return e.finish(d, e.reload(st))
		case d.Action == Pause:
			e.pause(d.Detail)
		default:
			e.sleepBetween(ctx, min(d.Delay-e.Clock.Since(e.endedAt), e.budgetLeft()))
		}
	}
}

// What drive does after between.
const (
	stepIterate = iota // start or adopt an iteration
	stepAgain          // look at the loop again
	stepEnd            // the loop is over: return
)

// between handles what happens between iterations: a loop ended by
// another command, a pause, and the ends that need no agent (done file,
// cap, time budget).
func (e *Engine) between(ctx context.Context, st *state.Ralph, w *state.Worker) (step, code int, err error) {
	switch st.Status {
	case state.RalphStopped, state.RalphFailed:
		code, err = e.endedElsewhere(st, w)
		return stepEnd, code, err
	case state.RalphPaused:
		if !st.IterationActive {
			if e.pauseAndExit.Load() {
				e.say("paused; monitor exiting (resume with: swarm ralph resume %s)", e.Name)
				return stepEnd, 0, nil
			}
			e.waitWhilePaused(ctx)
			return stepAgain, 0, nil
		}
	}
	if !st.IterationActive {
		if d, end := e.beforeIteration(st); end {
			code, err = e.finish(d, st)
			return stepEnd, code, err
		}
	}
	return stepIterate, 0, nil
}

// reload returns the loop state as the engine last read or wrote it
// (lastState), or st when there is none.
func (e *Engine) reload(st *state.Ralph) *state.Ralph {
	if cur := e.lastState(); cur != nil {
		return cur
	}
	return st
}

// lastState is the loop state as the engine last read or wrote it, which
// its store keeps (KeepFallback, from Run on); before that, the file as it
// is now, or nil if it cannot be read. Between polls the engine decides on
// this copy instead of reading the file again: only another command
// (pause, kill, ralph set) changes the file behind the engine, and the
// read at the next poll picks that up.
func (e *Engine) lastState() *state.Ralph {
	if st := e.RS.LastGood(); st != nil {
		return st
	}
	st, err := e.RS.Load()
	if err != nil {
		return nil
	}
	return st
}

// beforeIteration handles what ends a loop without starting an agent: a
// done file already present (verified like any completion), the iteration
// cap or the time budget reached (after a resume, say).
func (e *Engine) beforeIteration(st *state.Ralph) (Decision, bool) {
	snap := e.snapshot(st)
	if st.DoneFile != "" && fileExists(doneFilePath(st)) {
		o := Outcome{End: EndDoneFile, DoneFile: true}
		e.verify(&o, st, st.CurrentIteration)
		if d := Decide(o, snap); d.Action == Stop {
			return d, true
		}
	}
	return DecideCap(Outcome{}, snap, Decision{})
}

// budgetLeft is what remains of --max-time (a day when there is none):
// waits are cut to it so the budget is kept within a poll or so. It reads
// no file (lastState): a new budget (ralph set) counts from the next poll.
func (e *Engine) budgetLeft() time.Duration {
	st := e.lastState()
	if st == nil || st.MaxTime.Duration <= 0 {
		return noBudget
	}
	return max(0, st.MaxTime.Duration-e.Clock.Since(st.Started.Time))
}

func (e *Engine) snapshot(st *state.Ralph) Snapshot {
	return Snapshot{
		Iteration: st.CurrentIteration, MaxIterations: st.MaxIterations,
		ConsecutiveFailures: st.ConsecutiveFailures, TotalFailures: st.TotalFailures,
		Elapsed: e.Clock.Since(st.Started.Time), MaxTime: st.MaxTime.Duration,
		RestartDelay: st.RestartDelay.Duration,
		SameSession:  st.SameSession, Paused: st.Status != state.RalphRunning,
		LastRejection: string(st.LastRejection), FailOnCap: st.FailOnCap,
		Usage: st.Usage, MaxCost: st.MaxCost, MaxTokens: st.MaxTokens,
	}
}

// pause sets the loop paused after an iteration (wait without restart).
func (e *Engine) pause(reason string) {
	st, _ := e.update(func(s *state.Ralph) error {
		if s.Status == state.RalphRunning {
			s.Status = state.RalphPaused
			s.PauseReason = state.NullString(reason)
		}
		return nil
	})
	if st != nil && st.Status == state.RalphPaused {
		e.log(EventPause, "%s", reason)
		e.say("paused: %s (resume with: swarm ralph resume %s)", reason, e.Name)
	}
}

// waitWhilePaused blocks until the loop is no longer paused.
func (e *Engine) waitWhilePaused(ctx context.Context) {
	clock.Wait(ctx, e.Clock, e.Poll, clock.Forever, func() bool {
		st, err := e.RS.Load()
		return err != nil || st.Status != state.RalphPaused || e.pauseAndExit.Load()
	})
}

// sleepBetween waits d between iterations (restart delay or backoff);
// pausing, stopping or Ctrl-C ends the wait at once. It does not count as
// inactivity: no agent runs.
func (e *Engine) sleepBetween(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	clock.Wait(ctx, e.Clock, e.Poll, d, func() bool {
		st, err := e.RS.Load()
		return err == nil && st.Status != state.RalphRunning
	})
}

// finish ends the loop with decision d: state, log, window, worker record,
// on-exit hook. A loop already ended by another command (kill) keeps the
// reason that command wrote.
//
// A loop stopped at a pre-flight dialog leaves its agent at the dialog, in
// its window: the fix it prints is to answer the dialog there (swarm
// attach), then to resume. That iteration never got its prompt, so it does
// not count: the resumed loop starts it again.
func (e *Engine) finish(d Decision, st *state.Ralph) (int, error) {
	// Agent, window and worker record first: whoever sees the loop ended
	// (ralph wait, say) must not find its agent still running.
	w, err := e.M.Get(e.Name)
	keep := d.Reason == ReasonPreflight
	switch {
	case keep:
	case err == nil:
		e.removeWindow(w)
		if err := e.M.SetStatus(e.Name, state.StatusStopped); err != nil {
			e.say("cannot update the worker record: %v", err)
		}
	case errors.Is(err, worker.ErrNotFound) && e.known != nil:
		// The record was removed behind the loop's back (by hand, or by
		// a tool that knows nothing of loops): the window it last named
		// is still this loop's to close.
		e.removeWindow(e.known)
	}
	ended := false
	final, err := e.update(func(s *state.Ralph) error {
		if !s.Active() {
			return nil
		}
		ended = true
		s.Status, s.ExitReason, s.ExitDetail = d.Status, d.Reason, state.NullString(d.Detail)
		s.ExitHint = state.NullString(d.Hint)
		s.CapIncomplete = d.Incomplete
		s.IterationActive = false
		if keep && s.CurrentIteration > 0 {
			s.CurrentIteration--
		}
		// Logged before the state is written: whoever sees the loop
		// ended (ralph wait, then ralph logs) finds its DONE line.
		e.log(EventDone, "%s", doneText(s.CurrentIteration, d.Reason))
		return nil
	})
	if err != nil || final == nil {
		final = st
	}
	if ended {
		e.announce(final)
	}
	code := LoopExitCode(final)
	e.onExit(final, code)
	if ended && d.Fatal {
		if final.ExitHint != "" {
			return code, hint.Errorf(string(final.ExitHint), "%s", final.ExitDetail)
		}
		return code, errors.New(string(final.ExitDetail))
	}
	return code, nil
}

// endedElsewhere handles a loop stopped by another command (kill, stop):
// make sure the agent and window are gone, run the on-exit hook, exit.
func (e *Engine) endedElsewhere(st *state.Ralph, w *state.Worker) (int, error) {
	e.removeWindow(w)
	code := LoopExitCode(st)
	e.say("loop %s (%s)", st.Status, reasonText(st))
	e.onExit(st, code)
	return code, nil
}

func (e *Engine) announce(st *state.Ralph) {
	n := st.CurrentIteration
	switch st.ExitReason {
	case ReasonComplete:
		e.say("<promise>%s</promise> received, stopping loop", st.CompletionPromise)
		e.say("loop complete after %d iterations", n)
	case ReasonDonePattern:
		e.say("done pattern matched, stopping loop")
		e.say("loop complete after %d iterations", n)
	case ReasonDoneFile:
		e.say("done file %s found, stopping loop", st.DoneFile)
		e.say("loop complete after %d iterations", n)
	case ReasonMaxIterations:
		if st.CapIncomplete {
			e.say("stopping loop after %d iterations: %s", n, st.ExitDetail)
			return
		}
		e.say("loop complete after %d iterations", n)
	case ReasonMaxTime:
		e.say("time budget (%s) used up after %d iterations, stopping loop", duration.Words(st.MaxTime.Duration), n)
		if st.CapIncomplete {
			e.say("%s", st.ExitDetail)
		}
	case ReasonMaxCost:
		e.say("cost budget (%s) used up after %d iterations (spent %s), stopping loop", FormatCost(st.MaxCost), n, FormatCost(st.Cost()))
		if st.CapIncomplete {
			e.say("%s", st.ExitDetail)
		}
	case ReasonMaxTokens:
		e.say("token budget (%d) used up after %d iterations (spent %d), stopping loop", st.MaxTokens, n, st.Tokens())
		if st.CapIncomplete {
			e.say("%s", st.ExitDetail)
		}
	case ReasonBlocked:
		e.say("blocked after %d iterations: %s", n, st.ExitDetail)
	case ReasonDecide:
		e.say("decision needed after %d iterations: %s", n, st.ExitDetail)
	case ReasonFailed:
		if st.ConsecutiveFailures >= MaxFailures {
			e.say("%d consecutive failures, stopping loop", st.ConsecutiveFailures)
		} else {
			e.say("stopping loop: %s", st.ExitDetail)
		}
	case ReasonPreflight:
		e.say("pre-flight check failed: %s", st.ExitDetail)
		if st.ExitHint != "" {
			e.say("fix: %s", st.ExitHint)
		}
	case ReasonInterrupted:
		e.say("interrupted after %d iterations", n)
	case ReasonKilled:
		e.say("loop stopped (killed) after %d iterations", n)
	}
}

// doneText is the DONE event: how many iterations ran and why the loop
// ended (a killed loop "ended", it did not "complete").
// doneText is the DONE line of iterations.log in swarm.py's exact words
// ("iterations" even for one, "complete" whatever the reason): scripts
// and swarm.py's own readers grep for it.
func doneText(iterations int, reason state.ExitReason) string {
	return fmt.Sprintf("loop complete after %d iterations reason=%s", iterations, reason)
}

func reasonText(st *state.Ralph) string {
	if st.ExitReason == "" {
		return string(st.Status)
	}
	if st.ExitDetail != "" {
		return fmt.Sprintf("%s: %s", st.ExitReason, st.ExitDetail)
	}
	return string(st.ExitReason)
}

// removeWindow stops whatever still runs in the worker's window and
// removes it.
func (e *Engine) removeWindow(w *state.Worker) {
	if w.Tmux == nil {
		return
	}
	tc := e.TmuxFor(worker.Server(w))
	win, ok, err := worker.FindWindow(tc, w)
	if err != nil || !ok {
		return
	}
	e.stopAgent(tc, win.WindowID)
	if err := tc.KillWindow(win.WindowID); err != nil {
		e.say("cannot remove the worker's window: %v", err)
	}
}

// doneFilePath is the loop's --done-file, relative to its work directory.
func doneFilePath(st *state.Ralph) string {
	p := string(st.DoneFile)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(st.WorkDir, p)
}

// waitFilePath is the WAIT file next to the done file.
func waitFilePath(st *state.Ralph) string {
	return filepath.Join(filepath.Dir(doneFilePath(st)), "WAIT")
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
