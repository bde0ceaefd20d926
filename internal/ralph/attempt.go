package ralph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
	"github.com/swarmtools/swarm/internal/worktree"
)

// session is the agent an iteration starts (or adopts) in the worker's
// window: its process, its output stream and how its screens are read.
// With --same-session one session serves several turns, each an iteration
// of its own (continueSession).
type session struct {
	st *state.Ralph // the loop as the session began

	tc        Tmux        // an ownWindow: only the session's own window is acted on
	window    string      // tmux window id (@N); "" when there is none
	agentProc proc.Target // the agent's process, identified at launch
	out       string      // the agent's raw output (pipe-pane)
	exit      string      // where the agent's wrapper records its exit status
	reader    *logcap.Reader
	ended     bool   // out holds the wrapper's end marker (all output is in)
	tail      string // the last bytes read, for a marker split across reads
	// token is the window's tag (the record's worker.WindowTokenKey),
	// server the tmux server first seen to hold it (ownWindow).
	token, server string

	// What the agent's profile makes of its screen (internal/agent).
	profile    *agent.Profile
	limits     []*regexp.Regexp // --limit-pattern
	readyExtra []*regexp.Regexp // --ready-pattern
	lastHash   [16]byte         // the inactivity fingerprint last seen
	// resumedLimits are the limit lines on screen when the loop last went
	// on past a limit (the one waited out, and any the agent drew with
	// it): still shown until the agent answers, and none is a new limit.
	resumedLimits []string
	// rep is what the agent reports of itself (reports.go): nil when it
	// reports nothing, and the loop reads its screen alone.
	rep *reporting
}

// turn is one iteration as the monitor runs it: the prompt given to the
// session's agent, and what the watch has learned since. One value is
// made per iteration and handed down the steps (start or adopt → launch →
// deliver → watch → conclude), so an iteration reads top to bottom; a
// continuation of the same session is a new turn (turn.next), so nothing
// the previous one saw carries over unless next says so.
type turn struct {
	*session

	iter    int
	started time.Time // when the iteration started
	prompt  string    // the text delivered: its echo is not the agent's
	off     int64     // how far out has been read (a stream offset: logcap)
	det     *Detector
	tasks   int // task ids already recorded
	// suspectsSeen is the detector's Suspects count the rendered pane was
	// last checked at (confirmSuspects).
	suspectsSeen int

	// What the agent showed since the prompt.
	confirmed bool        // it showed it received the prompt
	worked    bool        // it was seen working
	baseTurns int         // its end-of-turn lines when the prompt went in
	shown     agent.State // the state last recorded
	dialog    string      // the dialog it shows now ("" for none)
	// dialogEvent: the agent's hooks reported that dialog; its screen
	// showing one is the same dialog, not a new one.
	dialogEvent bool
	nudged      bool // the --max-context nudge was sent
	pollErrors  int  // consecutive polls that failed
	// dialogPause: the loop paused itself for that dialog; the iteration
	// is held until it is resumed (heldAtDialog).
	dialogPause bool

	// What the agent reported (reported.go): its events not yet acted on
	// (kept while the iteration is held at a dialog), whether it took this
	// turn's prompt, what the session had spent when the turn began and
	// what was last recorded, when it reported the turn's end.
	queue    []agent.Event
	prompted bool
	// asked: a permission the agent asked for (JudgeEvents' Asked), a
	// dialog once its screen shows one. pendingStop: its Stop, held
	// back while the user's own Stop hooks may still block the turn's
	// end (reported).
	asked       *agent.Verdict
	askedShown  time.Time // since when the screen shows what was asked
	pendingStop *agent.Event
	base        state.Usage
	noted       state.Usage
	stopAt      time.Time

	// Timers.
	idleSince  time.Time // at its input box after working, since
	workingAt  time.Time // the last poll that saw it working
	outputAt   time.Time // when its output was last seen growing
	errorSince time.Time // showing an API error, since
	lastChange time.Time // the screen's last change
}

var errSkip = errors.New("loop not running")

// iteration runs one iteration and concludes it: ran is false when the
// loop was paused or stopped before an agent started. With --same-session
// a quiet agent is continued in place, each continuation an iteration of
// its own, until a decision other than Continue.
func (e *Engine) iteration(ctx context.Context, st *state.Ralph, w *state.Worker) (d Decision, ran bool) {
	t, o, err := e.run(ctx, st, w)
	if errors.Is(err, errSkip) {
		return Decision{}, false
	}
	for {
		if o.End == EndPromptError {
			e.log(EventFail, "%s", o.Detail)
			return Decide(o, e.snapshot(e.reload(st))), true
		}
		d = e.conclude(t, o, w)
		if d.Action != Continue {
			return d, true
		}
		t, o = e.continueSession(ctx, t)
	}
}

// run starts the iteration's agent (or adopts the one a dead monitor
// left), delivers the prompt and watches until the iteration ends.
func (e *Engine) run(ctx context.Context, st *state.Ralph, w *state.Worker) (*turn, Outcome, error) {
	var t *turn
	var early *Outcome
	var err error
	if st.IterationActive {
		t, early, err = e.adopt(ctx, st, w)
	} else {
		t, early, err = e.start(ctx, st, w)
	}
	if err != nil {
		return nil, Outcome{}, err
	}
	if early != nil {
		return t, *early, nil
	}
	return t, e.watch(ctx, t), nil
}

// newSession returns the session of an iteration's agent: its window and
// files are those of iteration iter.
func (e *Engine) newSession(st *state.Ralph, w *state.Worker, iter int) *session {
	s := &session{
		st:  st,
		out: outputPath(e.RS, iter), exit: exitPath(e.RS, iter),
		profile: profileOf(st, w), limits: e.compiled(st).limits, readyExtra: e.compiled(st).ready,
	}
	s.tc = ownWindow{Tmux: e.TmuxFor(worker.Server(w)), s: s}
	return s
}

// windowToken is the token the worker's window was made with ("" in a
// record of an older swarm).
func windowToken(w *state.Worker) string {
	token, _ := w.Metadata[worker.WindowTokenKey].(string)
	return token
}

// newTurn returns the turn of iteration iter in session s.
func newTurn(s *session, iter int, started time.Time, prompt string) *turn {
	return &turn{session: s, iter: iter, started: started, prompt: prompt, lastChange: started}
}

// next is the turn that continues t's session as iteration t.iter+1 with
// prompt. It starts as a fresh turn: unconfirmed, not yet worked, not
// idle, or its first poll would end it at once as idle again. Only where
// the output stands carries over: it reads on from where t stopped, and
// counts the agent's finished turns from t's count until its own prompt
// is typed (typePrompt).
func (t *turn) next(started time.Time, prompt string) *turn {
	n := newTurn(t.session, t.iter+1, started, prompt)
	n.off, n.baseTurns = t.off, t.baseTurns
	n.base = t.rep.sessionUsage()
	return n
}

// freshTurn returns the turn of iteration iter in a new session.
func (e *Engine) freshTurn(st *state.Ralph, w *state.Worker, iter int, started time.Time, prompt string) *turn {
	return newTurn(e.newSession(st, w, iter), iter, started, prompt)
}

// log reads the agent's output log, capped at the loop's size.
func (s *session) log() *logcap.Reader {
	if s.reader == nil {
		s.reader = logcap.NewReader(s.out, logMax(s.st))
	}
	return s.reader
}

// logMax is the cap of the loop's output logs.
func logMax(st *state.Ralph) int64 {
	if st.MaxLogSize > 0 {
		return st.MaxLogSize
	}
	return logcap.DefaultMax
}

// profileOf is the loop's agent profile: --agent, else the command's.
func profileOf(st *state.Ralph, w *state.Worker) *agent.Profile {
	if p, ok := agent.Lookup(st.Agent); ok {
		return p
	}
	return agent.For(w.Cmd)
}

// userPatterns are the loop's --limit-pattern and --ready-pattern,
// compiled.
type userPatterns struct {
	limits, ready []*regexp.Regexp
}

// compiled returns the loop's patterns, compiled on the first iteration
// and kept for the loop's life (they are fixed at spawn): not compiled
// again for every iteration of a long-running monitor.
func (e *Engine) compiled(st *state.Ralph) *userPatterns {
	if e.patterns == nil {
		e.patterns = &userPatterns{limits: compileAll(st.LimitPatterns), ready: compileAll(st.ReadyPatterns)}
	}
	return e.patterns
}

// compileAll compiles patterns validated at spawn (a bad one is skipped).
func compileAll(patterns []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// start begins a fresh iteration: the prompt is read from disk, the
// iteration is claimed in the state, the agent launched and the prompt
// delivered.
func (e *Engine) start(ctx context.Context, st *state.Ralph, w *state.Worker) (*turn, *Outcome, error) {
	iter := st.CurrentIteration + 1
	prompt, err := readPrompt(st.PromptFile)
	if err != nil {
		return e.freshTurn(st, w, st.CurrentIteration, e.Clock.Now(), ""), &Outcome{End: EndPromptError, Detail: err.Error()}, nil
	}
	if st.Feedback != "" {
		prompt = strings.TrimRight(prompt, "\n") + "\n\n" + string(st.Feedback)
	}
	if err := argPromptError(st.PromptMode, prompt); err != nil {
		return e.freshTurn(st, w, st.CurrentIteration, e.Clock.Now(), ""), &Outcome{End: EndPromptError, Detail: err.Error(), Hint: hint.Of(err)}, nil
	}
	// Re-read every iteration: the file may have been edited since the
	// spawn refused it. Stopped before the agent starts: nothing is typed.
	if err := shellPromptError(st.PromptMode, profileOf(st, w), prompt, st.PromptFile,
		"start the prompt file with other text (a line further down may start with '!'), then: swarm ralph resume "+e.Name); err != nil {
		return e.freshTurn(st, w, st.CurrentIteration, e.Clock.Now(), ""), &Outcome{End: EndPromptError, Detail: err.Error(), Hint: hint.Of(err)}, nil
	}
	t := e.freshTurn(st, w, iter, e.Clock.Now(), prompt)
	if err := e.claim(t); err != nil {
		if errors.Is(err, errSkip) {
			return nil, nil, err
		}
		return t, &Outcome{End: EndStartFailed, Detail: err.Error()}, nil
	}
	if err := e.M.SetMetadata(e.Name, map[string]any{"ralph": true, "ralph_iteration": iter}, state.StatusRunning); err != nil {
		e.say("cannot update the worker record: %v", err)
	}
	e.say("starting iteration %d/%d", iter, st.MaxIterations)
	return t, e.launchAndDeliver(ctx, t, w), nil
}

// claim records iteration t.iter as started. The status check happens
// under the state lock: a kill or pause written by another command is
// either seen here or comes after, and the watch sees it. The agent is
// started after the lock is released (starting tmux can take seconds).
func (e *Engine) claim(t *turn) error {
	var head, tree string
	if t.st.RequireChange {
		head, tree = worktree.Head(t.st.WorkDir), worktree.TreeState(t.st.WorkDir)
	}
	// The prompt is kept beside the state, not in it (it may be large):
	// a new monitor reads it back to recognise its echo.
	sum, size, err := e.RS.SaveDelivered(t.prompt)
	if err != nil {
		return fmt.Errorf("cannot save the prompt: %w", err)
	}
	_, err = e.update(func(s *state.Ralph) error {
		if s.Status != state.RalphRunning || s.IterationActive {
			return errSkip
		}
		// Under the loop's lock, as clean's removal of the record is
		// (Hooks.RemoveUnlessLoopHolds): no iteration starts for a
		// cleaned worker. drive then finds the record gone and ends.
		if _, err := e.M.Get(e.Name); errors.Is(err, worker.ErrNotFound) {
			return errSkip
		}
		s.PromptSHA256, s.PromptBytes = sum, size
		s.CurrentIteration = t.iter
		s.LastIterationStart = state.Timestamp{Time: t.started}
		s.IterationActive = true
		s.OutputOffset = 0
		s.PromptSent = s.PromptMode != ModeType
		s.PromptEntered = false
		s.Feedback = ""
		s.PauseReason = ""
		s.LastScreenChange = state.UTCTimestamp{Time: t.started}
		s.StartHead, s.StartTree = head, tree
		s.StateSource = state.SourceScreen // hooks, once the agent's report
		// Logged with the count, so a monitor dying right after still
		// leaves one START line per iteration.
		e.log(EventStart, "iteration %d/%d", t.iter, s.MaxIterations)
		return nil
	})
	return err
}

// launchAndDeliver starts the agent and delivers the prompt; a non-nil
// outcome ends the iteration before the watch.
func (e *Engine) launchAndDeliver(ctx context.Context, t *turn, w *state.Worker) *Outcome {
	if err := e.launch(t, w); err != nil {
		return &Outcome{End: EndStartFailed, Detail: err.Error()}
	}
	if early := e.deliver(ctx, t); early != nil {
		return early
	}
	e.markDelivered(t)
	return nil
}

// adopt continues an iteration whose agent a previous monitor started. If
// that monitor died before the prompt was delivered, the agent is started
// again within the same iteration: it may hold half a prompt. If the
// window is gone, the iteration is judged on the output it left.
func (e *Engine) adopt(ctx context.Context, st *state.Ralph, w *state.Worker) (*turn, *Outcome, error) {
	delivered, err := e.RS.LoadDelivered()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.say("cannot read the delivered prompt (%v); its echo may count as output", err)
	}
	t := e.freshTurn(st, w, st.CurrentIteration, st.LastIterationStart.Time, delivered)
	t.off = st.OutputOffset
	t.agentProc = agentTarget(st)
	e.adoptReporting(t)
	win, ok, err := worker.FindWindow(t.tc, w)
	if err != nil || !ok {
		return t, e.lostWhileAway(t), nil
	}
	t.setWindow(win.WindowID, windowToken(w))
	if st.PromptSent || (st.PromptEntered && (promptTaken(e.RS, t) || e.received(t))) {
		e.log(EventWarn, "monitor restarted; adopting iteration %d", t.iter)
		e.say("adopting running iteration %d", t.iter)
		t.det = e.primedDetector(t)
		if !st.PromptSent {
			e.confirm(t)
		}
		t.confirmed = true
		return t, nil, nil
	}
	if cur, err := e.RS.Load(); err != nil || cur.Status != state.RalphRunning {
		return nil, nil, errSkip
	}
	e.log(EventWarn, "monitor restarted before the prompt was delivered; restarting the agent of iteration %d", t.iter)
	e.say("restarting the agent of iteration %d (the previous monitor died before delivering the prompt)", t.iter)
	return t, e.launchAndDeliver(ctx, t, w), nil
}

// lostWhileAway ends an adopted iteration whose window went while no
// monitor watched (a reboot, a killed tmux server: swarm restore), as its
// agent left it: judged on its output. An agent that had exited, its exit
// status recorded by its wrapper, ends as that exit, as the watch would
// have seen it (ralph resume of a loop whose window is still there);
// else the iteration ends window-lost. Its prompt counts as received when
// the agent showed it had it (the dead monitor recorded it: PromptSent)
// or reported taking it (UserPromptSubmit): such an iteration is not
// "never received the prompt", and not a failure.
func (e *Engine) lostWhileAway(t *turn) *Outcome {
	st := t.st
	t.det = e.primedDetector(t)
	t.confirmed = st.PromptSent || (st.PromptEntered && promptTaken(e.RS, t))
	o := Outcome{End: EndWindowLost}
	if code, ok := t.readExit(); ok {
		o = Outcome{End: EndExited, ExitCode: code, ExitKnown: true}
	}
	o = e.final(t, o)
	return &o
}

// promptTaken reports whether the turn's agent reported taking a prompt
// (UserPromptSubmit) in the iteration's events file: the file is made
// afresh for each iteration, and the only prompt its agent is given is
// the loop's.
func promptTaken(rs *state.RalphStore, t *turn) bool {
	if !t.profile.Telemetry.Prompts {
		return false
	}
	path := eventsPath(rs, t.iter)
	for off := int64(0); ; {
		lines, next, err := state.ReadEvents(path, off)
		if err != nil || len(lines) == 0 || next <= off {
			return false
		}
		for _, l := range lines {
			if ev, err := agent.ParseEvent(l); err == nil && ev.Name == agent.EventUserPromptSubmit {
				return true
			}
		}
		off = next
	}
}

// agentTarget is the identity of the iteration's agent as the state
// recorded it.
func agentTarget(st *state.Ralph) proc.Target {
	return proc.Target{PID: st.AgentPID, Ticks: st.AgentStartTicks, Boot: st.AgentBootID}
}

// received reports, for an adopted iteration whose prompt was typed but
// not yet confirmed, whether the agent shows it got it (working, or a
// finished turn: this agent started fresh this iteration). An agent whose
// profile cannot tell is taken to have it: typing a prompt twice does
// more harm than waiting for the inactivity timeout.
func (e *Engine) received(t *turn) bool {
	if !t.profile.CanTellIdle() {
		return true
	}
	_, screen, err := t.tc.Poll(t.window)
	if err != nil {
		return false
	}
	v := t.profile.Judge(withoutEcho(screen, t.prompt), e.Clock.Now(), t.limits...)
	return v.State == agent.Working || v.Turns > 0 || v.State == agent.Error || v.State == agent.Limited
}

// launch runs the agent in the worker's window: the window is created
// once (with an idle placeholder) and every iteration respawns its pane, so
// anyone attached keeps watching across restarts.
func (e *Engine) launch(t *turn, w *state.Worker) error {
	if err := e.prepareFiles(t); err != nil {
		return err
	}
	win, ok, err := worker.FindWindow(t.tc, w)
	if err != nil {
		return err
	}
	t.setWindow(win.WindowID, windowToken(w))
	if !ok {
		// The token goes into the record before the window is made, so
		// a monitor that dies in between leaves a window the next one
		// finds by it.
		token := uuid.NewString()
		e.noteWindow(w, "", token)
		id, err := t.tc.NewWindow(tmux.WindowSpec{
			Session: w.Tmux.Session, Name: w.Tmux.Window, Dir: t.st.WorkDir,
			Command:     []string{"sh", "-c", "while :; do sleep 3600; done"},
			FocusEvents: worker.Socket(w) != "",
			Width:       worker.WindowWidth, Height: worker.WindowHeight,
			Tag: token,
		})
		if err != nil {
			return fmt.Errorf("failed to create tmux window: %w", err)
		}
		t.setWindow(id, token)
		e.noteWindow(w, t.window, token)
	}
	env := append(worker.WithCallerPath(w.Env), "SWARM_WORKER="+e.Name, fmt.Sprintf("SWARM_RALPH_ITERATION=%d", t.iter))
	// The env reaches the agent through a one-time file, not tmux's argv.
	command, tmuxEnv, undo, err := e.M.LaunchOnce(env, agentCommand(t.st.PromptMode, e.agentCmd(t, w), e.RS.PromptSnapshotPath(), t.exit))
	if err == nil {
		err = t.tc.Respawn(t.window, tmux.RespawnSpec{
			Dir: t.st.WorkDir, Env: tmuxEnv, Command: command,
			PipeTo: t.out, PipeVia: e.logSink(t.st), RemainOnExit: true,
		})
		if err != nil {
			undo()
		}
	}
	if err != nil {
		return fmt.Errorf("cannot start the agent: %w", err)
	}
	if pt, ok := worker.PaneTarget(t.tc, t.window); ok {
		t.agentProc = pt
		e.record(func(s *state.Ralph) error {
			s.AgentPID, s.AgentStartTicks, s.AgentBootID = pt.PID, pt.Ticks, pt.Boot
			return nil
		})
	}
	return nil
}

// noteWindow records the loop's window: its id ("" before it exists) and
// the token it carries. It is found by both from now on (worker.WindowOf):
// never a window of the same name, nor one of another tmux server's life
// that has the same id.
func (e *Engine) noteWindow(w *state.Worker, id, token string) {
	kv := map[string]any{worker.WindowIDKey: id, worker.WindowTokenKey: token}
	if err := e.M.SetMetadata(e.Name, kv, ""); err != nil {
		e.say("cannot update the worker record: %v", err)
	}
	for k, v := range kv {
		w.Metadata[k] = v
	}
}

// prepareFiles empties the iteration's output and exit files, makes room
// for them within the transcript budget, and writes the prompt snapshot
// the stdin and arg modes read. Both files are made afresh by swarm (0600,
// never through a symbolic link: state.OpenFile): the wrapper shell writes
// the exit status into the file swarm made, and the sink appends to the
// output it emptied.
func (e *Engine) prepareFiles(t *turn) error {
	if err := e.RS.MakeDir(filepath.Dir(t.out)); err != nil {
		return err
	}
	// Every iteration's output is kept (ralph logs --iteration), within
	// the loop's budget: the oldest go first.
	trimTranscripts(e.RS, TranscriptBudget-logMax(t.st), t.iter)
	for _, p := range reportingFiles(e.RS, t.iter) {
		_ = os.Remove(p) // best effort: the agent's hooks make them afresh, and a stale one is read from its offset
	}
	for _, p := range []string{t.out, t.exit} {
		// A new file, not whatever was there (a link planted at it, a
		// hard link to someone's file); truncated rather than made with
		// O_EXCL, since the sink of an earlier try of this iteration
		// may have put a file back meanwhile.
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		f, err := state.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_ = f.Close() // made empty: nothing was written to it
	}
	if t.st.PromptMode != ModeType {
		return state.WriteFileAtomic(e.RS.PromptSnapshotPath(), []byte(t.prompt))
	}
	return nil
}

// agentCommand wraps the worker command for the prompt mode. The wrapper
// shell writes the agent's exit status to a file: tmux's own record of it
// (pane_dead_status) is sometimes never set by tmux 3.3, and the file also
// tells that the agent exited when a child it left behind keeps the pane
// open. A missing command shows as 127, as in a terminal.
//
// Before the status, the wrapper prints endMarker (an escape sequence a
// terminal ignores): the output log is complete once it holds the marker,
// however late the log's writer (pipe-pane's sink) catches up. The status
// file is created 0600, as every file of the state root (the agent keeps
// the pane's umask).
func agentCommand(mode state.PromptMode, cmd []string, snapshot, status string) []string {
	const record = `; c=$?; printf '\033]7777;swarm-end\007'; (umask 077; echo "$c" > "$s"); exit "$c"`
	switch mode {
	case ModeStdin:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" < "$f"` + record, "swarm-agent", status, snapshot}, cmd...)
	case ModeArg:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" "$(cat "$f")"` + record, "swarm-agent", status, snapshot}, cmd...)
	}
	return append([]string{"sh", "-c", `s=$1; shift; "$@"` + record, "swarm-agent", status}, cmd...)
}

// readExit returns the recorded exit status of the session's agent.
func (s *session) readExit() (int, bool) {
	data, err := state.ReadFile(s.exit, maxExitFile)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, err == nil
}

// maxExitFile bounds the read of an exit file: a number and a newline.
const maxExitFile = 64

// MaxPromptBytes bounds a prompt file: a prompt is typed into an agent's
// input box and kept beside the loop state every iteration, and a larger
// file is almost surely a mistake (a log, a binary).
const MaxPromptBytes = 1 << 20

// readPrompt reads the prompt file fresh from disk (edits take effect in
// the next iteration), with the messages of docs/ralph.md. Only a regular
// file up to MaxPromptBytes is read: a FIFO would block the monitor
// forever, a device never ends.
func readPrompt(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("prompt file not found: %s", path)
	}
	if err != nil {
		return "", promptReadError(path, err)
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", promptReadError(path, err)
	case fi.IsDir():
		return "", fmt.Errorf("prompt file not found: %s", path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("prompt file is not a regular file: %s", path)
	case fi.Size() > MaxPromptBytes:
		return "", fmt.Errorf("prompt file is too large: %s (%d bytes; at most %d)", path, fi.Size(), MaxPromptBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPromptBytes+1))
	if err != nil {
		return "", promptReadError(path, err)
	}
	if len(data) > MaxPromptBytes {
		return "", fmt.Errorf("prompt file is too large: %s (more than %d bytes)", path, MaxPromptBytes)
	}
	return string(data), nil
}

// promptReadError is swarm.py's "cannot read prompt file: PATH" with why
// (the system's reason, which the path already names: not its op and
// path again), and the cause kept for errors.Is.
func promptReadError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read prompt file: %s: %w", path, err)
}

// deliver types the prompt in type mode: wait until the agent looks ready
// (its input box, no dialog), paste the prompt as one bracketed paste, let
// the echo settle, press Enter. t.off becomes the output offset from which
// the agent's reply counts. In stdin and arg modes the agent got the
// prompt at start. A dialog before the prompt went in is never answered:
// the loop stops (pre-flight) with the dialog's text and its fix.
func (e *Engine) deliver(ctx context.Context, t *turn) *Outcome {
	if t.st.PromptMode != ModeType {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stuck *agent.Verdict
	pane := worker.PaneScreen(t.tc, t.window)
	res, _ := ready.Wait(rctx, e.readyScreen(t), ready.WaitOptions{
		Interval: e.ReadyPoll, Timeout: min(t.st.ReadyTimeout.Duration, e.budgetLeft()),
		IsReady: func(s string) bool { return t.profile.Ready(s, t.readyExtra...) },
		Stuck:   t.profile.StuckKind,
		OnStuck: func(string) {
			if screen, _, err := pane(); err == nil {
				v := t.profile.Judge(screen, e.Clock.Now())
				stuck = &v
			}
			cancel()
		},
	})
	switch {
	case stuck != nil:
		e.warnStuck(t.iter, stuck.Kind)
		return preflight(e.Name, *stuck)
	case ctx.Err() != nil || res.Dead:
		return nil // the watch reports the exit, the kill or the interrupt
	case e.budgetLeft() == 0:
		return &Outcome{End: EndMaxTime}
	case !res.Ready:
		e.log(EventWarn, "iteration %d: agent did not look ready within %ds; sending the prompt anyway", t.iter, t.st.ReadyTimeout.Int())
	}
	e.typePrompt(ctx, t, t.prompt)
	return nil
}

// typePrompt types text into the agent (enter) and, between the echo and
// Enter, records where the reply starts and that Enter is being pressed.
// The record comes first: a monitor killed right after must not type the
// prompt a second time (adopt checks the screen instead).
//
// The reply starts where the output stood before the text was typed: an
// agent that reads lines answers a pasted line at once, before Enter and
// before its echo has settled, and that answer is the agent's. The echo of
// the prompt itself, in that stretch, is told apart by the detector (an
// echo agrees with the prompt around it, isEcho), as it is when an agent
// shows the prompt in its transcript.
func (e *Engine) typePrompt(ctx context.Context, t *turn, text string) {
	e.enter(ctx, t, text, func(from int64) {
		t.off = from
		e.dropEvents(t)
		e.earlySignal(t, text)
		if _, sc, err := t.tc.Poll(t.window); err == nil {
			t.baseTurns = t.profile.Judge(withoutEcho(sc, text), e.Clock.Now()).Turns
		}
		e.record(func(s *state.Ralph) error { s.OutputOffset, s.PromptEntered = t.off, true; return nil })
	})
}

// outputSize is the length of the session's output stream so far.
func (s *session) outputSize() int64 {
	n, _ := logcap.Size(s.out, logMax(s.st))
	return n
}

// enter pastes text as one bracketed paste and submits it; beforeEnter
// (if any) gets the output offset from before the paste.
func (e *Engine) enter(ctx context.Context, t *turn, text string, beforeEnter func(from int64)) {
	from := t.outputSize()
	if text != "" {
		if err := t.tc.Paste(t.window, text); err != nil {
			return // the watch finds the window gone
		}
	}
	e.submit(ctx, t, text, func() {
		if beforeEnter != nil {
			beforeEnter(from)
		}
	})
}

// submit presses Enter on text already put in the agent's input box: it
// waits until the agent shows it (awaitEcho) and its echo has settled,
// calls beforeEnter (if any), presses Enter, and makes sure the agent
// took it (ensureSubmitted).
func (e *Engine) submit(ctx context.Context, t *turn, text string, beforeEnter func()) {
	if text != "" {
		e.awaitEcho(ctx, t, text)
	}
	e.settle(ctx, t)
	if beforeEnter != nil {
		beforeEnter()
	}
	_ = t.tc.SendKeys(t.window, "Enter") // a lost Enter is pressed again (ensureSubmitted)
	e.ensureSubmitted(ctx, t, text)
}

// awaitEcho waits, for an agent whose input box its profile can read,
// until the box shows the pasted text, at most echoWait. Claude Code shows
// its input box seconds before it handles a paste, and drops an Enter
// pressed before then: the prompt would sit in the box all iteration.
func (e *Engine) awaitEcho(ctx context.Context, t *turn, text string) {
	if !t.profile.CanSeeTyped() {
		return
	}
	gone := false
	shown := clock.Wait(ctx, e.Clock, echoPoll, echoWait, func() bool {
		_, sc, err := t.tc.Poll(t.window)
		if err != nil {
			gone = true // the watch finds the window gone
			return true
		}
		pending, _ := t.profile.Pending(sc, text)
		return pending
	})
	if shown || gone || ctx.Err() != nil {
		return
	}
	e.log(EventWarn, "iteration %d: the agent did not show the pasted text within %s; pressing Enter anyway", t.iter, duration.Compact(echoWait))
}

// ensureSubmitted presses Enter again, at most maxEnterRetries times,
// while the agent's input box still holds the text submitWait after
// Enter: the agent dropped the key. An agent seen working meanwhile has
// the text (noteAgent confirms the delivery).
func (e *Engine) ensureSubmitted(ctx context.Context, t *turn, text string) {
	if !t.profile.CanSeeTyped() || text == "" {
		return
	}
	for try := 0; try < maxEnterRetries; try++ {
		if e.tookEnter(ctx, t, text) || ctx.Err() != nil {
			return
		}
		e.log(EventWarn, "iteration %d: the text was still in the agent's input box %s after Enter; pressing Enter again", t.iter, duration.Compact(submitWait))
		_ = t.tc.SendKeys(t.window, "Enter") // a lost Enter is what the next try looks for
	}
}

// tookEnter waits, at most submitWait, until the agent shows it took the
// Enter: its input box no longer holds the text, or it works (noteAgent
// confirms the delivery). A window that cannot be polled counts as taken:
// the watch finds it gone.
func (e *Engine) tookEnter(ctx context.Context, t *turn, text string) bool {
	return clock.Wait(ctx, e.Clock, echoPoll, submitWait, func() bool {
		_, sc, err := t.tc.Poll(t.window)
		if err != nil {
			return true
		}
		if v := t.profile.Judge(withoutEcho(sc, text), e.Clock.Now()); v.State == agent.Working {
			e.noteAgent(t, v)
			return true
		}
		pending, _ := t.profile.Pending(sc, text)
		return !pending
	})
}

// earlySignal warns about a completion tag the agent printed before its
// prompt was typed (while it started, or from an old session's transcript
// it shows): only output from the prompt on counts, so such a tag is
// ignored, and the user should know why the loop goes on.
func (e *Engine) earlySignal(t *turn, prompt string) {
	if t.off <= 0 {
		return
	}
	buf := make([]byte, min(t.off, int64(maxCarryEarly)))
	n, _ := t.log().ReadAt(buf, t.off-int64(len(buf)))
	det := e.detector(t.st, prompt)
	det.Feed(buf[:n])
	det.Flush()
	if sig, ok := det.Stop(); ok {
		e.log(EventWarn, "iteration %d: the agent printed a %s signal before its prompt was typed; it does not count", t.iter, sig.Kind.Reason())
		e.say("the agent printed a %s signal before its prompt was typed (ignored)", sig.Kind.Reason())
	}
}

// maxCarryEarly bounds how much output before the prompt is searched for
// an early completion tag.
const maxCarryEarly = 64 << 10

// readyScreen is the pane as ready detection sees it; a loop stopped from
// outside (kill) counts as the agent gone, so delivery gives up at once.
func (e *Engine) readyScreen(t *turn) ready.Screen {
	pane := worker.PaneScreen(t.tc, t.window)
	return func() (string, bool, error) {
		if cur, err := e.RS.Load(); err == nil && !cur.Active() {
			return "", true, nil
		}
		return pane()
	}
}

// markDelivered records that the prompt reached the agent and where its
// reply starts, so a new monitor adopts the iteration instead of typing
// the prompt again. An agent whose profile can tell (internal/agent) is
// taken to have it only once it shows so (working, or a finished turn):
// the watch confirms; others have it once it is typed.
func (e *Engine) markDelivered(t *turn) {
	if t.det == nil {
		t.det = e.primedDetector(t)
	}
	if t.profile.CanTellIdle() && t.st.PromptMode == ModeType && !t.confirmed {
		return
	}
	e.confirm(t)
}

// confirm records the prompt as delivered.
func (e *Engine) confirm(t *turn) {
	t.confirmed = true
	e.record(func(s *state.Ralph) error {
		s.OutputOffset, s.PromptSent, s.PromptEntered = t.off, true, false
		return nil
	})
}

// dialogDetail says which dialog stopped the loop, in its own words, and
// how to get past it (the profile's hint, or answering it by hand).
func dialogDetail(name string, v agent.Verdict) (detail, fix string) {
	detail = fmt.Sprintf("the agent is waiting at %s", agent.WithArticle(v.Kind))
	if v.Line != "" {
		detail += fmt.Sprintf(" (%q)", v.Line)
	}
	detail += "; swarm never answers it"
	fix = strings.ReplaceAll(v.Hint, "NAME", name)
	if fix == "" {
		fix = "answer it once by hand: swarm attach " + name
	}
	return detail, fmt.Sprintf("%s; then: swarm ralph resume %s", fix, name)
}

// preflight is the outcome of a dialog at the start of a loop.
func preflight(name string, v agent.Verdict) *Outcome {
	detail, fix := dialogDetail(name, v)
	return &Outcome{End: EndPreflight, Detail: detail, Hint: fix}
}

func (e *Engine) warnStuck(iter int, kind string) {
	e.log(EventWarn, "iteration %d: agent shows %s", iter, agent.WithArticle(kind))
	e.say("agent shows %s; it needs a human (swarm attach %s)", agent.WithArticle(kind), e.Name)
}

// settle waits until the output stops growing (the agent finished
// echoing the paste), at most settleMax: Enter pressed into a redraw
// still under way can be dropped.
func (e *Engine) settle(ctx context.Context, t *turn) {
	last, stable := t.outputSize(), e.Clock.Now()
	clock.Wait(ctx, e.Clock, settleTick, settleMax, func() bool {
		if s := t.outputSize(); s != last {
			last, stable = s, e.Clock.Now()
			return false
		}
		return e.Clock.Since(stable) >= settleQuiet
	})
}
