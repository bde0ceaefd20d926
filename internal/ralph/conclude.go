package ralph

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/exitcode"
	"github.com/swarmtools/swarm/internal/logcap"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/worktree"
)

// conclude ends an iteration: it records the end, verifies a completion
// signal (with the agent stopped: checks never run beside it), decides
// what comes next (Decide), stops the agent unless it continues in the
// same session, and logs the decision.
func (e *Engine) conclude(t *turn, o Outcome, w *state.Worker) Decision {
	dur := e.Clock.Since(t.started)
	e.endedAt = e.Clock.Now()
	e.fatalStart(t, &o)
	e.undelivered(t, &o)
	u := e.spent(t)
	st := e.recordEnd(t, o, dur, u)
	if o.End != EndStopped && o.End != EndInterrupted {
		// swarm.py's fields first: its parsers read the line as before.
		e.log(EventEnd, "iteration %d exit=%s%s duration=%s%s", t.iter, exitText(o), endReason(o), duration.Compact(dur), usageText(u))
	}
	if completion(o) {
		e.stopAgent(t.tc, t.window, t.agentProc)
		e.verify(&o, st, t.iter)
	}
	if o.End == EndExited && (o.ExitCode == exitcode.NotExecutable || o.ExitCode == exitcode.CommandNotFound) {
		if len(w.Cmd) > 0 {
			o.Detail = w.Cmd[0]
		}
		if o.Hint == "" {
			o.Hint = "check the command and PATH, then: swarm ralph resume " + e.Name
		}
	}
	d := Decide(o, e.snapshot(st))
	if d.Action != Continue && d.Reason != ReasonPreflight {
		// (An agent at a pre-flight dialog is left there: finish.)
		e.stopAgent(t.tc, t.window, t.agentProc)
	}
	if st.AutoCommit {
		e.autoCommit(t.iter, st, w)
	}
	e.record(func(s *state.Ralph) error {
		s.ConsecutiveFailures, s.TotalFailures = d.ConsecutiveFailures, d.TotalFailures
		return nil
	})
	e.report(t, o, d, dur)
	return d
}

// autoCommit is --auto-commit: what the iteration's agent left in the
// worktree (changes and untracked files; not git-ignored ones) is
// committed on the worker's branch, once the agent is stopped (or, with
// --same-session, quiet), before a completion's merge. A commit that
// cannot be made is a warning: the work stays in the worktree.
func (e *Engine) autoCommit(iter int, st *state.Ralph, w *state.Worker) {
	if w.Worktree == nil {
		return
	}
	// The done file (and the WAIT file beside it) stay out: committed,
	// and merged into the base, a done file would end the next loop made
	// from there before it began. (CommitAll leaves out the copies
	// .worktreeinclude made too.)
	var leave []string
	if st.DoneFile != "" {
		for _, p := range []string{doneFilePath(st), waitFilePath(st)} {
			if rel, err := filepath.Rel(w.Worktree.Path, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				leave = append(leave, rel)
			}
		}
	}
	commit, err := worktree.CommitAll(w.Worktree.BaseRepo, w.Worktree.Path, w.Worktree.Branch, fmt.Sprintf("swarm: %s iteration %d", e.Name, iter), leave...)
	switch {
	case err != nil:
		e.log(EventWarn, "iteration %d: --auto-commit: %s", iter, err)
		e.say("iteration %d: --auto-commit: %s", iter, err)
	case commit != "":
		e.log(EventCommit, "iteration %d committed %.12s on %s", iter, commit, w.Worktree.Branch)
	}
}

// spent is what the iteration's agent spent, once its status line has
// caught up with its last reply (settleUsage); a loop with a cost budget
// whose agent reported no cost is told so once.
func (e *Engine) spent(t *turn) state.Usage {
	if t.rep == nil {
		return state.Usage{}
	}
	e.settleUsage(t)
	u := t.turnUsage()
	if t.st.MaxCost > 0 && u.CostUSD == nil && !e.noCostWarned {
		e.noCostWarned = true
		e.log(EventWarn, "iteration %d: the agent reported no cost (state source: %s): --max-cost cannot be kept", t.iter, stateSource(t))
	}
	return u
}

// stateSource names where the turn's agent state came from.
func stateSource(t *turn) state.StateSource {
	if t.rep != nil && t.rep.heard {
		return state.SourceHooks
	}
	return state.SourceScreen
}

// recordEnd writes the iteration's end to the state, with what its agent
// spent, and returns the state (the last good one if the write failed).
func (e *Engine) recordEnd(t *turn, o Outcome, dur time.Duration, u state.Usage) *state.Ralph {
	st, err := e.update(func(s *state.Ralph) error {
		if u.Known() {
			setIterationUsage(s, t.iter, u)
		}
		s.IterationActive = false
		s.LastIterationEnd = state.Now()
		s.IterationDurations = append(s.IterationDurations, dur.Seconds())
		if o.ExitKnown {
			c := o.ExitCode
			s.LastExitCode = &c
		}
		s.LastEnd = state.NullString(endText(o))
		if o.End == EndAgentError || o.FatalStart {
			s.LastError = state.NullString(o.Detail)
		}
		if o.End != EndLimited {
			s.LimitWaits = 0
		}
		return nil
	})
	if err == nil {
		return st
	}
	if st, err = e.RS.Load(); err == nil {
		return st
	}
	if st = e.RS.LastGood(); st != nil {
		return st
	}
	return t.st
}

// fatalOutputTail is how much of the end of the agent's output is
// searched for a fatal start error.
const fatalOutputTail = 16 << 10

// fatalStart looks at the end of a failed agent's output for an error its
// profile knows it prints at start (Claude Code as root without
// IS_SANDBOX=1): the iteration is then a setup failure with the fix,
// shown in ralph status, not one more retry.
func (e *Engine) fatalStart(t *turn, o *Outcome) {
	if o.End != EndExited || !o.ExitKnown || o.ExitCode == 0 {
		return
	}
	c, err := logcap.ReadCapped(t.out, fatalOutputTail)
	if err != nil {
		return
	}
	if line, hint, ok := t.profile.FatalIn(string(c.Bytes(fatalOutputTail))); ok {
		o.FatalStart = true
		o.Detail, o.Hint = "the agent exited at start: "+line, hint
	}
}

// undelivered marks an iteration that ended by itself (exit 0, silence,
// its window gone) without its agent ever showing it received the typed
// prompt, though its profile can tell: the prompt went nowhere (it sat
// in the input box, was taken for a command). A WARN and a failure, never
// a silent success.
func (e *Engine) undelivered(t *turn, o *Outcome) {
	if t.confirmed || t.st.PromptMode != ModeType || !t.profile.CanTellIdle() || o.Signal.Kind != SignalNone || o.DoneFile {
		return
	}
	switch {
	case o.End == EndInactive, o.End == EndWindowLost, o.End == EndExited && o.ExitKnown && o.ExitCode == 0:
		o.Undelivered = true
		e.log(EventWarn, "iteration %d: the agent never showed it received the prompt; counted as a failure", t.iter)
		e.say("iteration %d: the agent never showed it received the prompt (counted as a failure)", t.iter)
	}
}

// endReason names, in the END line, an end that is not an exit.
func endReason(o Outcome) string {
	switch o.End {
	case EndIdle:
		return " reason=idle"
	case EndAgentError:
		return " reason=error"
	case EndLimited:
		return " reason=limit"
	case EndInactive:
		return " reason=inactivity"
	case EndWindowLost:
		return " reason=window-lost"
	case EndServerLost:
		return " reason=tmux-server-gone"
	}
	return ""
}

func completion(o Outcome) bool {
	return o.Signal.Kind == SignalComplete || o.Signal.Kind == SignalDonePattern || o.DoneFile
}

// report logs and prints what the decision means for the user.
func (e *Engine) report(t *turn, o Outcome, d Decision, dur time.Duration) {
	switch {
	case d.Failure && d.Action == Next:
		e.log(EventFail, "iteration %d exit=%s attempt=%d/%d backoff=%s", t.iter, failText(o), d.ConsecutiveFailures, MaxFailures, duration.Compact(d.Delay))
		e.say("iteration %d failed (exit: %s), retrying in %s (attempt %d/%d)", t.iter, failText(o), duration.Compact(d.Delay), d.ConsecutiveFailures, MaxFailures)
	case d.Failure:
		e.log(EventFail, "iteration %d exit=%s attempt=%d/%d", t.iter, failText(o), d.ConsecutiveFailures, MaxFailures)
	case o.End == EndExited || o.End == EndWindowLost || o.End == EndServerLost:
		e.say("iteration %d completed (exit: %s, duration: %s)", t.iter, exitText(o), duration.Format(dur))
	case o.End == EndInactive && d.Action == Next:
		e.say("inactivity timeout (%ds), restarting", t.st.InactivityTimeout.Int())
	case o.End == EndIdle && d.Action == Next && o.Reported:
		e.say("iteration %d done: the agent reported its turn finished", t.iter)
	case o.End == EndIdle && d.Action == Next:
		e.say("iteration %d done: the agent finished its turn (idle for %s)", t.iter, duration.Compact(t.st.IdleGrace.Duration))
	}
}

// continueSession is --same-session: the agent went quiet without a
// completion signal, so instead of restarting it, a continuation is typed
// into the same session and counted as a new iteration.
func (e *Engine) continueSession(ctx context.Context, t *turn) (*turn, Outcome) {
	prompt, err := readPrompt(t.st.PromptFile)
	if err != nil {
		return t, Outcome{End: EndPromptError, Detail: err.Error()}
	}
	msg := fmt.Sprintf("You stopped without printing <promise>%s</promise>. Continue the task below; print it only when the task is fully done.\n\n%s", t.st.CompletionPromise, prompt)
	next := t.next(e.Clock.Now(), msg)
	sum, size, err := e.RS.SaveDelivered(msg)
	if err != nil {
		e.say("cannot save the prompt: %v", err)
	}
	e.record(func(s *state.Ralph) error {
		s.CurrentIteration = next.iter
		s.LastIterationStart = state.Timestamp{Time: next.started}
		s.IterationActive = true
		s.PromptSHA256, s.PromptBytes = sum, size
		s.PromptSent, s.PromptEntered = false, false
		return nil
	})
	if err := e.M.SetMetadata(e.Name, map[string]any{"ralph_iteration": next.iter}, ""); err != nil {
		e.say("cannot update the worker record: %v", err)
	}
	e.log(EventStart, "iteration %d/%d (same session)", next.iter, t.st.MaxIterations)
	e.say("agent went quiet without a completion signal; continuing in the same session (iteration %d/%d)", next.iter, t.st.MaxIterations)
	// A failed paste shows as continued silence: the next timeout restarts.
	e.typePrompt(ctx, next, msg)
	e.markDelivered(next)
	return next, e.watch(ctx, next)
}

func exitText(o Outcome) string {
	if o.ExitKnown {
		return fmt.Sprint(o.ExitCode)
	}
	return "none"
}

func failText(o Outcome) string {
	switch o.End {
	case EndStartFailed:
		return "start failed: " + o.Detail
	case EndAgentError:
		return "agent error: " + o.Detail
	case EndServerLost:
		return endTexts[o.End]
	}
	if o.ExitKnown {
		return fmt.Sprint(o.ExitCode)
	}
	return "unknown"
}

func endText(o Outcome) string {
	switch o.End {
	case EndExited:
		if o.ExitKnown {
			return fmt.Sprintf("exited %d", o.ExitCode)
		}
		return "exited"
	case EndSignal:
		return "signal: " + string(o.Signal.Kind.Reason())
	case EndStartFailed:
		return "start failed: " + o.Detail
	case EndAgentError:
		return "agent error: " + o.Detail
	}
	return endTexts[o.End]
}

var endTexts = map[End]string{
	EndInactive:    "inactivity timeout",
	EndDoneFile:    "done file",
	EndWindowLost:  "window vanished",
	EndServerLost:  "the tmux server went away",
	EndFatal:       "fatal screen (compaction)",
	EndContext:     "context threshold",
	EndMaxTime:     "time budget used up",
	EndStopped:     "stopped",
	EndPreflight:   "pre-flight failed",
	EndInterrupted: "interrupted",
	EndPromptError: "prompt error",
	EndIdle:        "agent idle after its turn",
	EndLimited:     "paused while waiting out a limit",
	EndMaxCost:     "cost budget used up",
	EndMaxTokens:   "token budget used up",
}
