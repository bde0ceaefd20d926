package ralph

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/proc"
	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/tmux"
	"github.com/swarmtools/swarm/internal/worker"
)

// contextNudge is typed into an agent whose context passed --max-context.
const contextNudge = "Your context window is almost full. Commit your work now, update the plan with what is left, and exit."

// watch polls the agent until the iteration ends. Each poll is one tmux
// process (pane state and screen together) plus a read of the new bytes
// of the output file, and then these checks, in this order: stopped from
// outside, exited, a completion signal seen, the time budget, the screen's
// verdict, quiet for the inactivity timeout. The agent is left as it is:
// conclude stops it once the decision is made.
func (e *Engine) watch(ctx context.Context, t *turn) Outcome {
	if t.det == nil {
		t.det = e.primedDetector(t)
	}
	t.lastChange = e.Clock.Now()
	trimmed := false
	for {
		cur, _ := e.RS.Load()
		if o, ok := e.stoppedFromOutside(ctx, cur); ok {
			return o
		}
		held := e.heldAtDialog(t, cur)
		ps, screen, err := t.tc.Poll(t.window)
		if err != nil {
			if t.pollErrors++; tmux.IsNotFound(err) || errors.Is(err, errNotOurs) || t.pollErrors > maxPollErrors {
				if t.serverReplaced(err) {
					// The whole tmux server went (tmux kill-server, a
					// crash), whether or not another has started since:
					// the agent was killed with it, a failed iteration.
					return e.final(t, Outcome{End: EndServerLost})
				}
				return e.final(t, Outcome{End: EndWindowLost})
			}
			e.Clock.Sleep(ctx, e.Poll)
			continue
		}
		t.pollErrors = 0
		e.keepPiping(t, ps)
		e.readOutput(t)
		e.readReports(t)
		e.noteUsage(t)
		e.noteScreen(t, screen)
		checks := []func() (Outcome, bool){
			func() (Outcome, bool) { return e.exited(t, ps) },
			func() (Outcome, bool) { return e.reported(ctx, t, screen) },
			func() (Outcome, bool) { return e.signalled(t) },
			func() (Outcome, bool) { return e.overBudget(t) },
			func() (Outcome, bool) { return e.overSpent(t) },
			func() (Outcome, bool) { return e.judge(ctx, t, screen) },
			func() (Outcome, bool) { return e.quiet(t) },
		}
		if held {
			checks = []func() (Outcome, bool){
				func() (Outcome, bool) { return e.exited(t, ps) },
				func() (Outcome, bool) { return e.overBudget(t) },
				func() (Outcome, bool) { return e.overSpent(t) },
				func() (Outcome, bool) { e.noteAgent(t, e.verdict(t, screen).Agent); return Outcome{}, false },
			}
		}
		for _, check := range checks {
			if o, ok := check(); ok {
				return o
			}
		}
		if !trimmed {
			// After the first poll: what it does once (a profile's
			// patterns compiled) is behind it too.
			e.trim()
			trimmed = true
		}
		e.waitPoll(ctx, t)
	}
}

// trim calls Trim, if set, and says its first error.
func (e *Engine) trim() {
	if e.Trim == nil {
		return
	}
	if err := e.Trim(); err != nil && !e.trimFailed {
		e.trimFailed = true
		e.say("cannot give back the memory start-up used: %v", err)
	}
}

// waitPoll waits until the next poll (nextPoll), or less when the agent
// reported an event (its events file grew: a turn's end is acted on
// within outputCheck), or when the agent's output, which grew since the
// last poll, has gone quiet for
// outputQuiet: a turn that just ended is judged at once, not up to a whole
// poll later. Only for agents whose idle screen is known (a working one
// animates its spinner, so its output never goes quiet until the turn
// ends), only while a turn may be running (the last poll saw the agent
// working, or it has not worked yet since the prompt), and never sooner
// than earlyPollGap: an agent that prints in bursts is not polled at the
// rhythm of its bursts. Looking at the output is a file stat, no tmux
// process; it also records when the output last grew (outputAt), from
// which idle time is counted.
func (e *Engine) waitPoll(ctx context.Context, t *turn) {
	wait := e.nextPoll(t)
	output := t.profile.CanTellIdle() && wait >= 2*outputCheck
	events := t.rep != nil && t.rep.hooked
	if !output && !events {
		e.Clock.Sleep(ctx, wait)
		return
	}
	start := e.Clock.Now()
	early := t.shown == agent.Working || !t.worked
	// Output since the prompt counts as grown at the first look, as
	// before any look; after it, the log's stamp tells a change: a stat,
	// where its stream length is an open, a stat and a read of the cap's
	// marker, 20 times a poll.
	var last state.FileStamp
	if output {
		if n, err := logcap.Size(t.out, logMax(t.st)); err == nil && n == t.off {
			last = state.StampFile(t.out) // nothing since the prompt: growth from now on counts
		}
	}
	grew, quietSince := false, start
	clock.Wait(ctx, e.Clock, outputCheck, wait, func() bool {
		if events && t.rep.eventsGrew() {
			return true // the agent reported something: look now
		}
		if !output {
			return false
		}
		n := state.StampFile(t.out)
		switch {
		case n != last:
			last, grew, quietSince = n, true, e.Clock.Now()
			t.outputAt = quietSince
		case early && grew && e.Clock.Since(quietSince) >= outputQuiet && e.Clock.Since(start) >= earlyPollGap:
			return true
		}
		return false
	})
}

// nextPoll is the time to the next poll: the poll interval, or less when
// the agent's idle grace ends sooner, so that --idle-grace ends an
// iteration on time instead of at the next whole poll.
func (e *Engine) nextPoll(t *turn) time.Duration {
	wait := e.Poll
	if !t.idleSince.IsZero() {
		wait = min(wait, e.Clock.Until(t.idleSince.Add(t.st.IdleGrace.Duration)))
	}
	return max(wait, minPollGap)
}

// stoppedFromOutside ends the iteration when another command ended the
// loop (kill, stop) or Ctrl-C interrupted the foreground run. cur is the
// loop state as just read (nil if it could not be).
func (e *Engine) stoppedFromOutside(ctx context.Context, cur *state.Ralph) (Outcome, bool) {
	if cur != nil && (cur.Status == state.RalphStopped || cur.Status == state.RalphFailed) {
		return Outcome{End: EndStopped}, true
	}
	if ctx.Err() != nil {
		return Outcome{End: EndInterrupted}, true
	}
	return Outcome{}, false
}

// readOutput feeds the agent's new output to the detector and records
// task ids reported done.
func (e *Engine) readOutput(t *turn) {
	if !e.feed(t) {
		// No new output since the last poll: judge what is there with
		// the context there is; more is not on its way.
		t.det.Flush()
	} else {
		t.outputAt = e.Clock.Now()
	}
	e.recordTasks(t)
}

// noteScreen updates the inactivity fingerprint.
func (e *Engine) noteScreen(t *turn, screen string) {
	if h := screenHash(screen); h != t.lastHash {
		t.lastHash, t.lastChange = h, e.Clock.Now()
	}
	e.persistScreenChange(t.lastChange)
}

// exited: the agent's wrapper recorded an exit status, or tmux shows the
// pane dead (killed by a signal before the wrapper could record one).
func (e *Engine) exited(t *turn, ps tmux.PaneStatus) (Outcome, bool) {
	if code, ok := t.readExit(); ok {
		e.drain(t)
		return e.final(t, Outcome{End: EndExited, ExitCode: code, ExitKnown: true}), true
	}
	if !ps.Dead {
		return Outcome{}, false
	}
	code, known := e.deadPaneExit(t, ps)
	return e.final(t, Outcome{End: EndExited, ExitCode: code, ExitKnown: known}), true
}

// deadPaneExit is the exit status of an agent whose pane tmux shows dead:
// the wrapper's record, else tmux's own. tmux may mark the pane dead a
// moment before either is readable: they are looked for during
// exitStatusWait before the exit is called unknown.
func (e *Engine) deadPaneExit(t *turn, ps tmux.PaneStatus) (code int, known bool) {
	clock.Wait(context.Background(), e.Clock, exitStatusGap, exitStatusWait, func() bool {
		if code, known = t.readExit(); known || ps.ExitKnown() {
			return true
		}
		if p2, _, err := t.tc.Poll(t.window); err == nil {
			ps = p2
		}
		return false
	})
	if known {
		return code, true
	}
	return ps.ExitCode(), ps.ExitKnown()
}

// signalled: a completion signal in the output (acted on while the agent
// runs unless --no-check-done-continuous), or the done file.
func (e *Engine) signalled(t *turn) (Outcome, bool) {
	if _, ok := e.streamSignal(t, hooksReport(t)); ok && t.st.CheckDoneContinuous {
		return e.final(t, Outcome{End: EndSignal}), true
	}
	if t.st.DoneFile != "" && fileExists(doneFilePath(t.st)) {
		return e.final(t, Outcome{End: EndDoneFile, DoneFile: true}), true
	}
	return Outcome{}, false
}

// overBudget: the loop's --max-time is used up.
func (e *Engine) overBudget(t *turn) (Outcome, bool) {
	if t.st.MaxTime.Duration > 0 && e.Clock.Since(t.st.Started.Time) >= t.st.MaxTime.Duration {
		return e.final(t, Outcome{End: EndMaxTime}), true
	}
	return Outcome{}, false
}

// heldAtDialog reports whether the iteration is held: the loop paused
// itself because the agent showed a dialog mid-turn, and nobody has
// resumed it yet. While held the iteration does not end by itself (only
// the agent exiting or the time budget end it): the human who answers the
// dialog and then resumes the loop finds it where they left it, whatever
// the agent did in between, and resuming first and answering next works
// the same (the dialog seen again after the resume pauses nothing).
func (e *Engine) heldAtDialog(t *turn, cur *state.Ralph) bool {
	if !t.dialogPause {
		return false
	}
	if cur != nil && cur.Status == state.RalphPaused {
		return true
	}
	t.dialogPause = false // resumed
	return false
}

// verdict is the screen's judgement (JudgeScreen) for the turn now.
func (e *Engine) verdict(t *turn, screen string) ScreenVerdict {
	l := Look{Screen: screen, Prompt: t.prompt, MaxContext: int(t.st.MaxContext),
		Profile: t.profile, Limits: t.limits, Now: e.Clock.Now()}
	if t.rep != nil && t.rep.hasStatus {
		l.Context = t.rep.status.ContextPercent
	}
	return JudgeScreen(l)
}

// judge acts on the screen's verdict (JudgeScreen): first what stops the
// agent whatever it does (a dialog, a compaction, the context gauge), then
// the agent's state: a usage limit is waited out, an API error or a
// finished turn ends the iteration.
func (e *Engine) judge(ctx context.Context, t *turn, screen string) (Outcome, bool) {
	v := e.verdict(t, screen)
	e.noteAgent(t, v.Agent)
	if v.Agent.State == agent.Dialog {
		if t.dialogEvent {
			// The agent reported this dialog (its hooks name it
			// better than its screen): not a second one.
			t.lastChange, t.idleSince, t.errorSince = e.Clock.Now(), time.Time{}, time.Time{}
			return Outcome{}, false
		}
		if t.asked != nil {
			// The permission it asked for shows (a menu, to its screen).
			// Claude Code draws it and runs the user's own
			// PermissionRequest hooks at once, and one that allows the
			// tool takes it away a moment later: only a dialog still
			// shown after askSettle waits for a human (its
			// permission_prompt notification says so sooner, reported).
			now := e.Clock.Now()
			if t.askedShown.IsZero() {
				t.askedShown = now
			}
			if now.Sub(t.askedShown) < askSettle(e.Poll) {
				t.lastChange, t.idleSince, t.errorSince = now, time.Time{}, time.Time{}
				return Outcome{}, false
			}
			t.dialogEvent = true
			return e.onDialog(t, *t.asked)
		}
		return e.onDialog(t, v.Agent)
	}
	t.askedShown = time.Time{} // a dialog shown, gone: a hook answered it
	if t.dialogEvent && v.Agent.State == agent.Working && t.rep.dropsRoutine() {
		// Its events file is past the cap of routine events: the tool
		// use that would say it went on after the dialog was dropped,
		// and its screen says so instead.
		t.dialogEvent = false
	}
	if t.pendingStop != nil && v.Agent.State == agent.Idle && e.Clock.Since(t.stopAt) >= stopHookSettle {
		// The Stop held back for the user's Stop hooks: none blocked,
		// the agent is at its input box.
		return e.stopped(t, *t.pendingStop), true
	}
	if !t.dialogEvent {
		// (A dialog the agent reported is over when it reports work
		// again: its hook fires before the dialog is drawn.)
		t.dialog = ""
	}
	switch {
	case v.Compacting:
		e.log(EventFatal, "iteration %d: %s; restarting with a fresh context", t.iter, compactionText)
		e.say("agent is compacting its context; restarting it fresh")
		return e.final(t, Outcome{End: EndFatal}), true
	case v.Context == ContextRestart:
		e.log(EventFatal, "iteration %d: context at %d%% (limit %d%%+%d); restarting", t.iter, v.ContextPercent, t.st.MaxContext, contextRestartMargin)
		return e.final(t, Outcome{End: EndContext}), true
	case v.Context == ContextNudge && !t.nudged:
		t.nudged = true
		e.log(EventWarn, "iteration %d: context at %d%%; asked the agent to commit and exit", t.iter, v.ContextPercent)
		if err := worker.SendText(t.tc, t.window, contextNudge, worker.SendOptions{}); err != nil {
			e.say("cannot ask the agent to commit and exit: %v", err)
		}
	}
	switch v.Agent.State {
	case agent.Limited:
		if e.staleLimit(t, v.Agent) {
			return Outcome{}, false // waited out; the agent has the message
		}
		return e.waitOutLimit(ctx, t, v.Agent)
	case agent.Error:
		return e.onError(t, v.Agent)
	case agent.Idle:
		return e.onIdle(t, v.Agent)
	}
	t.idleSince, t.errorSince = time.Time{}, time.Time{}
	return Outcome{}, false
}

// noteAgent follows the agent's state: it confirms the prompt's delivery
// once the agent shows it (working, or a turn finished), notes that it
// worked, and records a new state for ralph status.
func (e *Engine) noteAgent(t *turn, v agent.Verdict) {
	if v.State == agent.Working {
		t.workingAt = e.Clock.Now()
	}
	if v.State == agent.Working || v.Turns > t.baseTurns {
		t.worked = true
		if !t.confirmed {
			e.confirm(t)
		}
	}
	if v.State == t.shown {
		return
	}
	t.shown = v.State
	e.record(func(s *state.Ralph) error {
		s.AgentState, s.AgentDetail = state.NullString(v.State), state.NullString(v.Line)
		return nil
	})
}

// onDialog: a dialog or menu only a human should answer. Once the prompt
// was submitted (type mode: the watch starts after Enter) the loop
// pauses, with the iteration held (heldAtDialog) and the agent left at
// the dialog for a human (swarm attach) and then swarm ralph resume: an
// agent asking for a permission right after the prompt has the prompt.
// Only an agent given its prompt at start (stdin, arg modes) that shows a
// dialog before it ever worked is at a setup screen: the loop stops with
// pre-flight failed. (Setup dialogs before a typed prompt are caught by
// deliver.) A dialog is never inactivity.
func (e *Engine) onDialog(t *turn, v agent.Verdict) (Outcome, bool) {
	t.lastChange, t.idleSince, t.errorSince = e.Clock.Now(), time.Time{}, time.Time{}
	if t.dialog == v.Kind {
		return Outcome{}, false
	}
	t.dialog = v.Kind
	e.warnStuck(t.iter, v.Kind)
	if t.st.PromptMode != ModeType && !t.worked {
		return *preflight(e.Name, v), true
	}
	detail, fix := dialogDetail(e.Name, v)
	reason := fmt.Sprintf("%s (%s)", detail, fix)
	paused := false
	e.record(func(s *state.Ralph) error {
		if s.Runs() {
			s.Status, s.PauseReason, paused = state.RalphPaused, state.NullString(reason), true
		}
		return nil
	})
	if paused {
		t.dialogPause = true
		e.log(EventPause, "iteration %d: agent waits at %s", t.iter, agent.WithArticle(v.Kind))
		e.say("paused: the agent waits at %s (%q); answer it with: swarm attach %s, then: swarm ralph resume %s", agent.WithArticle(v.Kind), v.Line, e.Name, e.Name)
	}
	return Outcome{}, false
}

// onError: an API error ended the agent's turn. Once it has shown for a
// moment (not a passing screen), the iteration ends as a failure.
func (e *Engine) onError(t *turn, v agent.Verdict) (Outcome, bool) {
	t.idleSince = time.Time{}
	if t.errorSince.IsZero() {
		t.errorSince = e.Clock.Now()
	}
	if e.Clock.Since(t.errorSince) < errorSettle(e.Poll) {
		return Outcome{}, false
	}
	e.log(EventWarn, "iteration %d: agent error: %s", t.iter, v.Line)
	o := Outcome{End: EndAgentError, Detail: v.Line}
	if v.Hint != "" {
		// An error its profile knows no retry gets past (a prompt taken
		// for a slash command): the loop stops with the fix.
		o.FatalStart, o.Hint = true, strings.ReplaceAll(v.Hint, "NAME", e.Name)
		o.Detail = "the agent answered: " + v.Line
	}
	return e.final(t, o), true
}

// idleStart is when the agent, seen idle now for the first time, went
// idle: when it drew its idle screen, which is the last output seen, if
// that came after the last poll that saw it working; else (no output
// seen since) that poll, the latest moment it is known to have worked.
func idleStart(t *turn, now time.Time) time.Time {
	switch {
	case t.workingAt.IsZero():
		return now
	case t.outputAt.After(t.workingAt):
		return t.outputAt
	}
	return t.workingAt
}

// onIdle: the agent finished a turn and sits at its input box; after
// --idle-grace the iteration ends without waiting for the inactivity
// timeout (which stays the safety net for screens no profile knows).
func (e *Engine) onIdle(t *turn, v agent.Verdict) (Outcome, bool) {
	t.errorSince = time.Time{}
	if !t.worked || !t.profile.CanTellIdle() {
		return Outcome{}, false
	}
	if t.idleSince.IsZero() {
		t.idleSince = idleStart(t, e.Clock.Now())
	}
	if e.Clock.Since(t.idleSince) < t.st.IdleGrace.Duration {
		return Outcome{}, false
	}
	return e.final(t, Outcome{End: EndIdle}), true
}

// quiet: the screen has not changed for the inactivity timeout. An agent
// its profile sees working (a spinner, "esc to interrupt") is never
// quiet, however still its screen: a turn that thinks for minutes is
// work, and the timeout is for screens no profile knows. --max-time
// bounds a turn that never ends.
func (e *Engine) quiet(t *turn) (Outcome, bool) {
	if t.shown == agent.Working {
		return Outcome{}, false
	}
	last := t.lastChange
	if t.workingAt.After(last) {
		last = t.workingAt
	}
	if e.Clock.Since(last) < t.st.InactivityTimeout.Duration {
		return Outcome{}, false
	}
	e.log(EventTimeout, "iteration %d inactivity_timeout=%ds", t.iter, t.st.InactivityTimeout.Int())
	return e.final(t, Outcome{End: EndInactive}), true
}

// endMarker is what the agent's wrapper prints after the agent exits
// (agentCommand): an OSC sequence terminals ignore.
const endMarker = "\x1b]7777;swarm-end\x07"

// drainWait bounds the wait for the output log to catch up with an agent
// that exited: the sink that writes it may still be starting.
const drainWait = 5 * time.Second

// drain feeds the detector the agent's output until the log holds the end
// marker the wrapper printed, so a tag printed just before exiting is
// never missed.
func (e *Engine) drain(t *turn) {
	if t.det == nil {
		t.det = e.primedDetector(t)
	}
	clock.Wait(context.Background(), e.Clock, settleTick, drainWait, func() bool {
		e.feed(t)
		return t.ended
	})
}

// final completes an outcome with what the rest of the output holds: the
// strongest signal, task ids, the done and WAIT files.
func (e *Engine) final(t *turn, o Outcome) Outcome {
	if t.det == nil {
		t.det = e.primedDetector(t)
	}
	e.feed(t)
	t.det.Flush()
	e.recordTasks(t)
	if s, ok := e.streamSignal(t, o.Reported && o.End == EndIdle); ok {
		o.Signal = s
	}
	if t.st.DoneFile != "" {
		o.DoneFile = o.DoneFile || fileExists(doneFilePath(t.st))
		o.WaitFile = fileExists(waitFilePath(t.st))
	}
	return o
}

// hooksReport reports whether the agent's hooks report its turns: then
// its promise is judged in the final message its Stop event carries
// (stopped), not in its output, which also holds its echo of the prompt
// and its earlier messages.
func hooksReport(t *turn) bool { return t.rep != nil && t.rep.heard }

// streamSignal is the strongest signal in the agent's output so far. A
// promise tag the prompt also holds is confirmed on the rendered pane
// first (Detector.Redrawn). With byHooks only a done pattern counts: the
// promise is the final message's (stopped).
func (e *Engine) streamSignal(t *turn, byHooks bool) (Signal, bool) {
	if !byHooks {
		e.confirmSuspects(t)
	}
	for k := SignalComplete; k <= SignalDecide; k++ {
		if byHooks && k != SignalDonePattern {
			continue
		}
		if s, ok := t.det.Found(k); ok {
			return s, true
		}
	}
	return Signal{}, false
}

// confirmSuspects reads the pane, with its history, when the output has
// shown a promise tag the prompt also holds since it was last read: one
// capture per such tag, not one per poll.
func (e *Engine) confirmSuspects(t *turn) {
	n := t.det.Suspects()
	if n == 0 || n == t.suspectsSeen || t.window == "" {
		return
	}
	t.suspectsSeen = n
	text, err := t.tc.Capture(t.window, tmux.CaptureOptions{Start: "-", Join: true})
	if err != nil {
		e.say("cannot read the agent's screen to confirm a completion tag: %v", err)
		return
	}
	t.det.Confirm(text)
}

func (e *Engine) detector(st *state.Ralph, prompt string) *Detector {
	cfg := DetectorConfig{Promise: st.Promise, Word: st.CompletionPromise}
	if st.DonePattern != "" {
		cfg.DonePattern, _ = compilePattern(string(st.DonePattern))
	}
	return NewDetector(cfg, prompt)
}

// primedDetector returns a detector for the turn's output from t.off
// on, primed with the output just before it (the echo of the prompt) as
// context.
func (e *Engine) primedDetector(t *turn) *Detector {
	det := e.detector(t.st, t.prompt)
	det.cfg.Redrawn = true
	if t.off > 0 {
		start := max(0, t.off-echoContext)
		buf := make([]byte, t.off-start)
		n, _ := t.log().ReadAt(buf, start)
		det.Prime(buf[:n])
	}
	return det
}

// feed gives the detector the agent's output written since t.off (the
// log is capped: logcap.Reader follows it across the cuts) and reports
// whether there was any. It notes the end marker (drain): a poll may read
// it before the exit is noticed.
func (e *Engine) feed(t *turn) bool {
	r := t.log()
	r.SetOffset(t.off)
	data, err := r.ReadNew()
	if len(data) > 0 {
		t.det.Feed(data)
		seen := t.tail + string(data)
		t.ended = t.ended || strings.Contains(seen, endMarker)
		t.tail = seen[max(0, len(seen)-len(endMarker)):]
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.say("cannot read the agent's output: %v", err)
	}
	moved := r.Offset() != t.off
	t.off = r.Offset()
	return moved
}

// fingerprintLines is how many of the screen's last non-blank lines the
// inactivity fingerprint covers (swarm.py's 20).
const fingerprintLines = 20

// screenHash is the inactivity fingerprint: MD5 of the ANSI-stripped last
// fingerprintLines non-blank lines of the screen (docs/ralph.md). Blank
// lines are left out whatever the pane's size: in a 200x50 window an
// agent's output fills the top of the pane for a long while, and the last
// 20 rows, all blank, would never change however busy it is.
func screenHash(screen string) [16]byte {
	return md5.Sum([]byte(strings.Join(lastNonBlankLines(ready.StripANSI(screen), fingerprintLines), "\n")))
}

// lastNonBlankLines returns the last n lines of text that hold more than
// white space, in order.
func lastNonBlankLines(text string, n int) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, n)
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
		}
	}
	slices.Reverse(out)
	return out
}

// recordTasks stores task ids reported done in this iteration.
func (e *Engine) recordTasks(t *turn) {
	tasks := t.det.Tasks()
	if len(tasks) <= t.tasks {
		return
	}
	fresh := tasks[t.tasks:]
	t.tasks = len(tasks)
	e.record(func(s *state.Ralph) error {
		for _, id := range fresh {
			s.TasksDone = append(s.TasksDone, state.TaskDone{Iteration: t.iter, ID: id})
		}
		return nil
	})
	for _, id := range fresh {
		e.say("task %s done (iteration %d)", id, t.iter)
	}
}

// persistScreenChange records the time of the last screen change for
// ralph status: at most one write a second, and the latest change is
// always written eventually.
func (e *Engine) persistScreenChange(t time.Time) {
	if t.Equal(e.persisted) || e.Clock.Since(e.lastPersist) < screenChangePersist {
		return
	}
	e.lastPersist, e.persisted = e.Clock.Now(), t
	e.record(func(s *state.Ralph) error {
		s.LastScreenChange = state.UTCTimestamp{Time: t}
		return nil
	})
}

// stopAgent stops the pane's process and everything it started (SIGTERM
// to its process groups, SIGKILL after the grace period), confirming its
// identity first (worker.PaneTarget), and waits until tmux sees the pane
// dead. The window stays (remain-on-exit). An agent that already exited
// may have left children in its group: those go too when the agent's
// identity is known (agent, recorded at launch).
func (e *Engine) stopAgent(tc Tmux, id string, agentProc ...proc.Target) {
	if id == "" {
		return
	}
	pane, alive := worker.PaneTarget(tc, id)
	if !alive {
		for _, ap := range agentProc {
			if ap.PID > 1 && !ap.Exists() {
				proc.TerminateTargets(proc.OrphansOf(ap.PID), e.StopGrace)
			}
		}
		return
	}
	proc.TerminateTarget(pane, e.StopGrace)
	clock.Wait(context.Background(), e.Clock, exitStatusGap, paneDeadWait, func() bool {
		ps, _, err := tc.Poll(id)
		return err != nil || ps.Dead
	})
}
