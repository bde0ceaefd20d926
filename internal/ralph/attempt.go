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

// attempt is one iteration as the monitor runs it: what was started and
// delivered, and what the watch has learned so far. One value is made per
// iteration and handed down the steps (start or adopt → launch → deliver
// → watch → conclude), so an iteration reads top to bottom.
type attempt struct {
	iter     int
	started  time.Time // when the iteration started
	promptAt time.Time // when the prompt was submitted
	prompt   string    // the text delivered: its echo is not the agent's
	st       *state.Ralph

	tc     Tmux
	window string // tmux window id (@N); "" when there is none
	out    string // the agent's raw output (pipe-pane)
	exit   string // where the agent's wrapper records its exit status
	off    int64  // how far out has been read (a stream offset: logcap)
	ended  bool   // out holds the wrapper's end marker (all output is in)
	tail   string // the last bytes read, for a marker split across reads
	det    *Detector
	reader *logcap.Reader

	// What the agent's profile makes of its screen (internal/agent).
	profile    *agent.Profile
	limits     []*regexp.Regexp // --limit-pattern
	readyExtra []*regexp.Regexp // --ready-pattern
	confirmed  bool             // the agent showed it received the prompt
	worked     bool             // it was seen working since the prompt
	baseTurns  int              // its end-of-turn lines when the prompt went in
	idleSince  time.Time        // at its input box after working, since
	workingAt  time.Time        // the last poll that saw it working
	outputAt   time.Time        // when its output was last seen growing
	errorSince time.Time        // showing an API error, since
	dialog     string           // the dialog it shows now ("" for none)
	// dialogPause: the loop paused itself for that dialog; the iteration
	// is held until it is resumed (heldAtDialog).
	dialogPause bool
	// resumedLimit is the limit line waited out, still on screen until
	// the agent answers the limit message.
	resumedLimit string
	agentProc    proc.Target // the agent's process, identified at launch
	shown        agent.State // the state last recorded

	lastHash   [16]byte
	lastChange time.Time       // the screen's last change
	warned     map[string]bool // stuck screens reported this iteration
	nudged     bool            // the --max-context nudge was sent
	tasks      int             // task ids already recorded
	pollErrors int             // consecutive polls that failed
}

var errSkip = errors.New("loop not running")

// iteration runs one iteration and concludes it: ran is false when the
// loop was paused or stopped before an agent started. With --same-session
// a quiet agent is continued in place, each continuation an iteration of
// its own, until a decision other than Continue.
func (e *Engine) iteration(ctx context.Context, st *state.Ralph, w *state.Worker) (d Decision, ran bool) {
	a, o, err := e.run(ctx, st, w)
	if errors.Is(err, errSkip) {
		return Decision{}, false
	}
	for {
		if o.End == EndPromptError {
			e.log("FAIL", "%s", o.Detail)
			return Decide(o, e.snapshot(e.reload(st))), true
		}
		d = e.conclude(a, o, w)
		if d.Action != Continue {
			return d, true
		}
		a, o = e.continueSession(ctx, a)
	}
}

// run starts the iteration's agent (or adopts the one a dead monitor
// left), delivers the prompt and watches until the iteration ends.
func (e *Engine) run(ctx context.Context, st *state.Ralph, w *state.Worker) (*attempt, Outcome, error) {
	var a *attempt
	var early *Outcome
	var err error
	if st.IterationActive {
		a, early, err = e.adopt(ctx, st, w)
	} else {
		a, early, err = e.start(ctx, st, w)
	}
	if err != nil {
		return nil, Outcome{}, err
	}
	if early != nil {
		return a, *early, nil
	}
	return a, e.watch(ctx, a), nil
}

// newAttempt returns the attempt of iteration iter of the loop.
func (e *Engine) newAttempt(st *state.Ralph, w *state.Worker, iter int, started time.Time, prompt string) *attempt {
	return &attempt{
		iter: iter, started: started, prompt: prompt, st: st,
		tc:  e.TmuxFor(worker.Server(w)),
		out: outputPath(e.RS, iter), exit: exitPath(e.RS, iter),
		warned:  map[string]bool{},
		profile: profileOf(st, w), limits: compileAll(st.LimitPatterns), readyExtra: compileAll(st.ReadyPatterns),
	}
}

// log reads the agent's output log, capped at the loop's size.
func (a *attempt) log() *logcap.Reader {
	if a.reader == nil {
		a.reader = logcap.NewReader(a.out, logMax(a.st))
	}
	return a.reader
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
func (e *Engine) start(ctx context.Context, st *state.Ralph, w *state.Worker) (*attempt, *Outcome, error) {
	iter := st.CurrentIteration + 1
	prompt, err := readPrompt(st.PromptFile)
	if err != nil {
		return e.newAttempt(st, w, st.CurrentIteration, e.Clock.Now(), ""), &Outcome{End: EndPromptError, Detail: err.Error()}, nil
	}
	if st.Feedback != "" {
		prompt = strings.TrimRight(prompt, "\n") + "\n\n" + string(st.Feedback)
	}
	if err := argPromptError(st.PromptMode, prompt); err != nil {
		return e.newAttempt(st, w, st.CurrentIteration, e.Clock.Now(), ""), &Outcome{End: EndPromptError, Detail: err.Error(), Hint: hint.Of(err)}, nil
	}
	a := e.newAttempt(st, w, iter, e.Clock.Now(), prompt)
	if err := e.claim(a); err != nil {
		if errors.Is(err, errSkip) {
			return nil, nil, err
		}
		return a, &Outcome{End: EndStartFailed, Detail: err.Error()}, nil
	}
	if err := e.M.SetMetadata(e.Name, map[string]any{"ralph": true, "ralph_iteration": iter}, state.StatusRunning); err != nil {
		e.say("cannot update the worker record: %v", err)
	}
	e.say("starting iteration %d/%d", iter, st.MaxIterations)
	return a, e.launchAndDeliver(ctx, a, w), nil
}

// claim records iteration a.iter as started. The status check happens
// under the state lock: a kill or pause written by another command is
// either seen here or comes after, and the watch sees it. The agent is
// started after the lock is released (starting tmux can take seconds).
func (e *Engine) claim(a *attempt) error {
	var head, tree string
	if a.st.RequireChange {
		head, tree = worktree.Head(a.st.WorkDir), worktree.TreeState(a.st.WorkDir)
	}
	// The prompt is kept beside the state, not in it (it may be large):
	// a new monitor reads it back to recognise its echo.
	sum, size, err := e.RS.SaveDelivered(a.prompt)
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
		s.CurrentIteration = a.iter
		s.LastIterationStart = state.Timestamp{Time: a.started}
		s.IterationActive = true
		s.OutputOffset = 0
		s.PromptSent = s.PromptMode != ModeType
		s.PromptEntered = false
		s.Feedback = ""
		s.PauseReason = ""
		s.LastScreenChange = state.UTCTimestamp{Time: a.started}
		s.StartHead, s.StartTree = head, tree
		// Logged with the count, so a monitor dying right after still
		// leaves one START line per iteration.
		e.log("START", "iteration %d/%d", a.iter, s.MaxIterations)
		return nil
	})
	return err
}

// launchAndDeliver starts the agent and delivers the prompt; a non-nil
// outcome ends the iteration before the watch.
func (e *Engine) launchAndDeliver(ctx context.Context, a *attempt, w *state.Worker) *Outcome {
	if err := e.launch(a, w); err != nil {
		return &Outcome{End: EndStartFailed, Detail: err.Error()}
	}
	if early := e.deliver(ctx, a); early != nil {
		return early
	}
	e.markDelivered(a)
	return nil
}

// adopt continues an iteration whose agent a previous monitor started. If
// that monitor died before the prompt was delivered, the agent is started
// again within the same iteration: it may hold half a prompt. If the
// window is gone, the iteration is judged on the output it left.
func (e *Engine) adopt(ctx context.Context, st *state.Ralph, w *state.Worker) (*attempt, *Outcome, error) {
	delivered, err := e.RS.LoadDelivered()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.say("cannot read the delivered prompt (%v); its echo may count as output", err)
	}
	a := e.newAttempt(st, w, st.CurrentIteration, st.LastIterationStart.Time, delivered)
	a.off = st.OutputOffset
	a.agentProc = agentTarget(st)
	win, ok, err := worker.FindWindow(a.tc, w)
	if err != nil || !ok {
		a.det = e.primedDetector(a)
		o := e.final(a, Outcome{End: EndWindowLost})
		return a, &o, nil
	}
	a.window = win.WindowID
	if st.PromptSent || (st.PromptEntered && e.received(a)) {
		e.log("WARN", "monitor restarted; adopting iteration %d", a.iter)
		e.say("adopting running iteration %d", a.iter)
		a.promptAt = e.Clock.Now()
		a.det = e.primedDetector(a)
		if !st.PromptSent {
			e.confirm(a)
		}
		a.confirmed = true
		return a, nil, nil
	}
	if cur, err := e.RS.Load(); err != nil || cur.Status != state.RalphRunning {
		return nil, nil, errSkip
	}
	e.log("WARN", "monitor restarted before the prompt was delivered; restarting the agent of iteration %d", a.iter)
	e.say("restarting the agent of iteration %d (the previous monitor died before delivering the prompt)", a.iter)
	return a, e.launchAndDeliver(ctx, a, w), nil
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
func (e *Engine) received(a *attempt) bool {
	if !a.profile.CanTellIdle() {
		return true
	}
	_, screen, err := a.tc.Poll(a.window)
	if err != nil {
		return false
	}
	v := a.profile.Judge(withoutEcho(screen, a.prompt), e.Clock.Now(), a.limits...)
	return v.State == agent.Working || v.Turns > 0 || v.State == agent.Error || v.State == agent.Limited
}

// launch runs the agent in the worker's window: the window is created
// once (with an idle placeholder) and every iteration respawns its pane, so
// anyone attached keeps watching across restarts.
func (e *Engine) launch(a *attempt, w *state.Worker) error {
	if err := e.prepareFiles(a); err != nil {
		return err
	}
	win, ok, err := worker.FindWindow(a.tc, w)
	if err != nil {
		return err
	}
	a.window = win.WindowID
	if !ok {
		// The token goes into the record before the window is made, so
		// a monitor that dies in between leaves a window the next one
		// finds by it.
		token := uuid.NewString()
		e.noteWindow(w, "", token)
		a.window, err = a.tc.NewWindow(tmux.WindowSpec{
			Session: w.Tmux.Session, Name: w.Tmux.Window, Dir: a.st.WorkDir,
			Command:     []string{"sh", "-c", "while :; do sleep 3600; done"},
			FocusEvents: worker.Socket(w) != "",
			Width:       worker.WindowWidth, Height: worker.WindowHeight,
			Tag: token,
		})
		if err != nil {
			return fmt.Errorf("failed to create tmux window: %w", err)
		}
		e.noteWindow(w, a.window, token)
	}
	env := append(worker.WithCallerPath(w.Env), "SWARM_WORKER="+e.Name, fmt.Sprintf("SWARM_RALPH_ITERATION=%d", a.iter))
	// The env reaches the agent through a one-time file, not tmux's argv.
	command, tmuxEnv, undo, err := e.M.LaunchOnce(env, agentCommand(a.st.PromptMode, w.Cmd, e.RS.PromptSnapshotPath(), a.exit))
	if err == nil {
		err = a.tc.Respawn(a.window, tmux.RespawnSpec{
			Dir: a.st.WorkDir, Env: tmuxEnv, Command: command,
			PipeTo: a.out, PipeVia: e.logSink(a.st), RemainOnExit: true,
		})
		if err != nil {
			undo()
		}
	}
	if err != nil {
		return fmt.Errorf("cannot start the agent: %w", err)
	}
	if t, ok := worker.PaneTarget(a.tc, a.window); ok {
		a.agentProc = t
		e.update(func(s *state.Ralph) error {
			s.AgentPID, s.AgentStartTicks, s.AgentBootID = t.PID, t.Ticks, t.Boot
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
func (e *Engine) prepareFiles(a *attempt) error {
	if err := e.RS.MakeDir(filepath.Dir(a.out)); err != nil {
		return err
	}
	// Every iteration's output is kept (ralph logs --iteration), within
	// the loop's budget: the oldest go first.
	trimTranscripts(e.RS, TranscriptBudget-logMax(a.st), a.iter)
	for _, p := range []string{a.out, a.exit} {
		// A new file, not whatever was there (a link planted at it, a
		// hard link to someone's file); truncated rather than made with
		// O_EXCL, since the sink of an earlier try of this iteration
		// may have put a file back meanwhile.
		os.Remove(p)
		f, err := state.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		f.Close()
	}
	if a.st.PromptMode != ModeType {
		return state.WriteFileAtomic(e.RS.PromptSnapshotPath(), []byte(a.prompt))
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
func agentCommand(mode string, cmd []string, snapshot, status string) []string {
	const record = `; c=$?; printf '\033]7777;swarm-end\007'; (umask 077; echo "$c" > "$s"); exit "$c"`
	switch mode {
	case ModeStdin:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" < "$f"` + record, "swarm-agent", status, snapshot}, cmd...)
	case ModeArg:
		return append([]string{"sh", "-c", `s=$1; f=$2; shift 2; "$@" "$(cat "$f")"` + record, "swarm-agent", status, snapshot}, cmd...)
	}
	return append([]string{"sh", "-c", `s=$1; shift; "$@"` + record, "swarm-agent", status}, cmd...)
}

// readExit returns the recorded exit status of the attempt's agent.
func (a *attempt) readExit() (int, bool) {
	data, err := state.ReadFile(a.exit, maxExitFile)
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
		return "", fmt.Errorf("cannot read prompt file: %s", path)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read prompt file: %s", path)
	case fi.IsDir():
		return "", fmt.Errorf("prompt file not found: %s", path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("prompt file is not a regular file: %s", path)
	case fi.Size() > MaxPromptBytes:
		return "", fmt.Errorf("prompt file is too large: %s (%d bytes; at most %d)", path, fi.Size(), MaxPromptBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPromptBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read prompt file: %s", path)
	}
	if len(data) > MaxPromptBytes {
		return "", fmt.Errorf("prompt file is too large: %s (more than %d bytes)", path, MaxPromptBytes)
	}
	return string(data), nil
}

// deliver types the prompt in type mode: wait until the agent looks ready
// (its input box, no dialog), paste the prompt as one bracketed paste, let
// the echo settle, press Enter. a.off becomes the output offset from which
// the agent's reply counts. In stdin and arg modes the agent got the
// prompt at start. A dialog before the prompt went in is never answered:
// the loop stops (pre-flight) with the dialog's text and its fix.
func (e *Engine) deliver(ctx context.Context, a *attempt) *Outcome {
	a.promptAt = e.Clock.Now()
	if a.st.PromptMode != ModeType {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stuck *agent.Verdict
	pane := worker.PaneScreen(a.tc, a.window)
	res, _ := ready.Wait(rctx, e.readyScreen(a), ready.WaitOptions{
		Interval: e.ReadyPoll, Timeout: min(time.Duration(a.st.ReadyTimeout)*time.Second, e.budgetLeft()),
		IsReady: func(s string) bool { return a.profile.Ready(s, a.readyExtra...) },
		Stuck:   a.profile.StuckKind,
		OnStuck: func(string) {
			if screen, _, err := pane(); err == nil {
				v := a.profile.Judge(screen, e.Clock.Now())
				stuck = &v
			}
			cancel()
		},
	})
	switch {
	case stuck != nil:
		e.warnStuck(a.iter, stuck.Kind)
		return preflight(e.Name, *stuck)
	case ctx.Err() != nil || res.Dead:
		return nil // the watch reports the exit, the kill or the interrupt
	case e.budgetLeft() == 0:
		return &Outcome{End: EndMaxTime}
	case !res.Ready:
		e.log("WARN", "iteration %d: agent did not look ready within %ds; sending the prompt anyway", a.iter, a.st.ReadyTimeout)
	}
	e.typePrompt(ctx, a, a.prompt)
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
func (e *Engine) typePrompt(ctx context.Context, a *attempt, text string) {
	e.enter(ctx, a, text, func(from int64) {
		a.off = from
		e.earlySignal(a, text)
		if _, sc, err := a.tc.Poll(a.window); err == nil {
			a.baseTurns = a.profile.Judge(withoutEcho(sc, text), e.Clock.Now()).Turns
		}
		e.update(func(s *state.Ralph) error { s.OutputOffset, s.PromptEntered = a.off, true; return nil })
	})
	a.promptAt = e.Clock.Now()
}

// outputSize is the length of the attempt's output stream so far.
func (a *attempt) outputSize() int64 {
	n, _ := logcap.Size(a.out, logMax(a.st))
	return n
}

// enter pastes text as one bracketed paste and submits it; beforeEnter
// (if any) gets the output offset from before the paste.
func (e *Engine) enter(ctx context.Context, a *attempt, text string, beforeEnter func(from int64)) {
	from := a.outputSize()
	if text != "" {
		if err := a.tc.Paste(a.window, text); err != nil {
			return // the watch finds the window gone
		}
	}
	e.submit(ctx, a, text, func() {
		if beforeEnter != nil {
			beforeEnter(from)
		}
	})
}

// submit presses Enter on text already put in the agent's input box: it
// waits until the agent shows it (awaitEcho) and its echo has settled,
// calls beforeEnter (if any), presses Enter, and makes sure the agent
// took it (ensureSubmitted).
func (e *Engine) submit(ctx context.Context, a *attempt, text string, beforeEnter func()) {
	if text != "" {
		e.awaitEcho(ctx, a, text)
	}
	e.settle(ctx, a)
	if beforeEnter != nil {
		beforeEnter()
	}
	a.tc.SendKeys(a.window, "Enter")
	e.ensureSubmitted(ctx, a, text)
}

// awaitEcho waits, for an agent whose input box its profile can read,
// until the box shows the pasted text, at most echoWait. Claude Code shows
// its input box seconds before it handles a paste, and drops an Enter
// pressed before then: the prompt would sit in the box all iteration.
func (e *Engine) awaitEcho(ctx context.Context, a *attempt, text string) {
	if !a.profile.CanSeeTyped() {
		return
	}
	gone := false
	shown := clock.Wait(ctx, e.Clock, echoPoll, echoWait, func() bool {
		_, sc, err := a.tc.Poll(a.window)
		if err != nil {
			gone = true // the watch finds the window gone
			return true
		}
		pending, _ := a.profile.Pending(sc, text)
		return pending
	})
	if shown || gone || ctx.Err() != nil {
		return
	}
	e.log("WARN", "iteration %d: the agent did not show the pasted text within %s; pressing Enter anyway", a.iter, duration.Compact(echoWait))
}

// ensureSubmitted presses Enter again, at most maxEnterRetries times,
// while the agent's input box still holds the text submitWait after
// Enter: the agent dropped the key. An agent seen working meanwhile has
// the text (noteAgent confirms the delivery).
func (e *Engine) ensureSubmitted(ctx context.Context, a *attempt, text string) {
	if !a.profile.CanSeeTyped() || text == "" {
		return
	}
	for try := 0; try < maxEnterRetries; try++ {
		if e.tookEnter(ctx, a, text) || ctx.Err() != nil {
			return
		}
		e.log("WARN", "iteration %d: the text was still in the agent's input box %s after Enter; pressing Enter again", a.iter, duration.Compact(submitWait))
		a.tc.SendKeys(a.window, "Enter")
	}
}

// tookEnter waits, at most submitWait, until the agent shows it took the
// Enter: its input box no longer holds the text, or it works (noteAgent
// confirms the delivery). A window that cannot be polled counts as taken:
// the watch finds it gone.
func (e *Engine) tookEnter(ctx context.Context, a *attempt, text string) bool {
	return clock.Wait(ctx, e.Clock, echoPoll, submitWait, func() bool {
		_, sc, err := a.tc.Poll(a.window)
		if err != nil {
			return true
		}
		if v := a.profile.Judge(withoutEcho(sc, text), e.Clock.Now()); v.State == agent.Working {
			e.noteAgent(a, v)
			return true
		}
		pending, _ := a.profile.Pending(sc, text)
		return !pending
	})
}

// earlySignal warns about a completion tag the agent printed before its
// prompt was typed (while it started, or from an old session's transcript
// it shows): only output from the prompt on counts, so such a tag is
// ignored, and the user should know why the loop goes on.
func (e *Engine) earlySignal(a *attempt, prompt string) {
	if a.off <= 0 {
		return
	}
	buf := make([]byte, min(a.off, int64(maxCarryEarly)))
	n, _ := a.log().ReadAt(buf, a.off-int64(len(buf)))
	det := e.detector(a.st, prompt)
	det.Feed(buf[:n])
	det.Flush()
	if sig, ok := det.Stop(); ok {
		e.log("WARN", "iteration %d: the agent printed a %s signal before its prompt was typed; it does not count", a.iter, sig.Kind.Reason())
		e.say("the agent printed a %s signal before its prompt was typed (ignored)", sig.Kind.Reason())
	}
}

// maxCarryEarly bounds how much output before the prompt is searched for
// an early completion tag.
const maxCarryEarly = 64 << 10

// readyScreen is the pane as ready detection sees it; a loop stopped from
// outside (kill) counts as the agent gone, so delivery gives up at once.
func (e *Engine) readyScreen(a *attempt) ready.Screen {
	pane := worker.PaneScreen(a.tc, a.window)
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
func (e *Engine) markDelivered(a *attempt) {
	if a.det == nil {
		a.det = e.primedDetector(a)
	}
	if a.profile.CanTellIdle() && a.st.PromptMode == ModeType && !a.confirmed {
		return
	}
	e.confirm(a)
}

// confirm records the prompt as delivered.
func (e *Engine) confirm(a *attempt) {
	a.confirmed = true
	e.update(func(s *state.Ralph) error {
		s.OutputOffset, s.PromptSent, s.PromptEntered = a.off, true, false
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
	e.log("WARN", "iteration %d: agent shows %s", iter, agent.WithArticle(kind))
	e.say("agent shows %s; it needs a human (swarm attach %s)", agent.WithArticle(kind), e.Name)
}

// settle waits until the output stops growing (the agent finished
// echoing the paste), at most settleMax: Enter pressed into a redraw
// still under way can be dropped.
func (e *Engine) settle(ctx context.Context, a *attempt) {
	last, stable := a.outputSize(), e.Clock.Now()
	clock.Wait(ctx, e.Clock, settleTick, settleMax, func() bool {
		if s := a.outputSize(); s != last {
			last, stable = s, e.Clock.Now()
			return false
		}
		return e.Clock.Since(stable) >= settleQuiet
	})
}
