package ralph

import (
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/exitcode"
	"github.com/swarmtools/swarm/internal/state"
)

// Exit reasons (state.json exit_reason), named here for the loop's code
// as os names io/fs's file modes.
const (
	ReasonDonePattern   = state.ReasonDonePattern
	ReasonComplete      = state.ReasonComplete
	ReasonBlocked       = state.ReasonBlocked
	ReasonDecide        = state.ReasonDecide
	ReasonDoneFile      = state.ReasonDoneFile
	ReasonMaxIterations = state.ReasonMaxIterations
	ReasonMaxTime       = state.ReasonMaxTime
	ReasonFailed        = state.ReasonFailed
	ReasonKilled        = state.ReasonKilled
	ReasonInterrupted   = state.ReasonInterrupted
	ReasonPreflight     = state.ReasonPreflight
	ReasonMaxCost       = state.ReasonMaxCost
	ReasonMaxTokens     = state.ReasonMaxTokens
)

// ExitCapIncomplete is the exit code of a loop that reached its cap not
// complete (exitcode.CapIncomplete; docs/completion.md).
const ExitCapIncomplete = exitcode.CapIncomplete

// ExitCode maps an exit reason to the loop's process exit code
// (internal/exitcode): OK for a completed loop or a reached cap, Blocked,
// Decide, Interrupted, Failure for everything else (failed, killed,
// pre-flight). LoopExitCode adds the cap reached not complete.
func ExitCode(reason state.ExitReason) int {
	switch reason {
	case ReasonComplete, ReasonDonePattern, ReasonDoneFile, ReasonMaxIterations, ReasonMaxTime, ReasonMaxCost, ReasonMaxTokens:
		return exitcode.OK
	case ReasonBlocked:
		return exitcode.Blocked
	case ReasonDecide:
		return exitcode.Decide
	case ReasonInterrupted:
		return exitcode.Interrupted
	}
	return exitcode.Failure
}

// LoopExitCode is the exit code of an ended loop: its reason's, or
// ExitCapIncomplete for a cap the loop reached not complete.
func LoopExitCode(st *state.Ralph) int {
	if st.CapIncomplete && isCap(st.ExitReason) {
		return ExitCapIncomplete
	}
	return ExitCode(st.ExitReason)
}

// accepted reports whether a loop ended on an accepted completion.
func accepted(reason state.ExitReason) bool {
	return reason == ReasonComplete || reason == ReasonDonePattern || reason == ReasonDoneFile
}

// isCap reports whether a reason is a cap or a budget: a normal end, or
// one not complete (exit 4) after a rejected completion or --fail-on-cap.
func isCap(reason state.ExitReason) bool {
	return reason == ReasonMaxIterations || reason == ReasonMaxTime || reason == ReasonMaxCost || reason == ReasonMaxTokens
}

// MaxFailures consecutive failures stop a loop.
const MaxFailures = 5

// WaitExitCode is the agent exit code that asks the loop to wait for a
// human instead of restarting (docs/completion.md: wait without restart).
const WaitExitCode = 42

// End is how an iteration ended.
type End int

const (
	EndExited      End = iota // the agent exited by itself
	EndInactive               // screen unchanged for the inactivity timeout
	EndSignal                 // a stop signal in its output; agent stopped
	EndDoneFile               // the done file appeared
	EndWindowLost             // the window vanished
	EndStartFailed            // the agent could not be started
	EndFatal                  // fatal screen (compaction): restart, no failure
	EndContext                // context threshold: restart, no failure
	EndMaxTime                // the loop's time budget ran out
	EndStopped                // the loop was stopped (killed) from outside
	EndPreflight              // iteration 1 hit a screen a human must pass
	EndInterrupted            // Ctrl-C in the foreground
	EndPromptError            // the prompt file is gone or unreadable
	EndIdle                   // the agent finished its turn and sat idle for --idle-grace
	EndAgentError             // an API error ended the agent's turn: a failure
	EndLimited                // paused while waiting out a usage limit: no failure
	EndServerLost             // the window went with the whole tmux server: a failure
	EndMaxCost                // the loop's --max-cost was reached mid-turn
	EndMaxTokens              // the loop's --max-tokens was reached mid-turn
)

// Outcome is what the monitor observed about one iteration, after any
// verification of a completion signal.
type Outcome struct {
	End       End
	ExitCode  int
	ExitKnown bool
	Signal    Signal // strongest stop signal seen (Kind None if none)
	DoneFile  bool   // the done file exists
	WaitFile  bool   // the WAIT file exists
	// Rejected is why a completion signal was not accepted (a failing
	// check, no change); empty if accepted or there was none.
	Rejected string
	// Detail explains start failures, pre-flight failures, prompt
	// errors, the agent's API error or its fatal start error; Hint is how
	// to fix a pre-flight failure or a fatal start error.
	Detail string
	Hint   string
	// FatalStart: the agent exited on an error it prints at start (its
	// profile's Fatal patterns), or its screen shows an error no retry
	// gets past (ScreenFatal); retrying cannot help.
	FatalStart bool
	// Undelivered: the iteration ended without the agent ever showing
	// that it received the prompt (an agent whose profile can tell): a
	// failure, never a silent success.
	Undelivered bool
	// Reported: the agent's own event ended the iteration (its hooks:
	// a Stop, a StopFailure, a SessionEnd), not its screen.
	Reported bool
}

// Snapshot is the loop state Decide needs.
type Snapshot struct {
	Iteration           int
	MaxIterations       int
	ConsecutiveFailures int
	TotalFailures       int
	Elapsed             time.Duration
	MaxTime             time.Duration
	RestartDelay        time.Duration
	// SameSession is --same-session: a quiet agent is continued in
	// place, unless the loop is Paused.
	SameSession bool
	Paused      bool
	// LastRejection is why the loop's last completion signal was
	// rejected (last_rejection), if it was: reaching a cap then is
	// reaching it not complete. FailOnCap (--fail-on-cap) makes any cap
	// not complete.
	LastRejection string
	FailOnCap     bool
	// Usage is what the loop's agents reported spending so far, MaxCost
	// and MaxTokens its budgets (0: none).
	Usage     state.Usage
	MaxCost   float64
	MaxTokens int64
}

// Action is what the loop does next.
type Action int

const (
	Next     Action = iota // start the next iteration after Delay
	Stop                   // end the loop
	Pause                  // pause until resumed (wait without restart)
	Continue               // type a continuation into the same agent (--same-session)
)

// Decision is the result of Decide.
type Decision struct {
	Action Action
	Status state.RalphStatus // loop status after Stop or Pause
	Reason state.ExitReason  // exit_reason (Stop)
	// Detail says more: the exit detail (Stop), or why the loop pauses
	// (Pause: pause_reason).
	Detail string
	Hint   string // how to fix what stopped the loop
	// Failure is set when the iteration counts as a failure.
	Failure bool
	// Fatal marks an end the user must fix (missing prompt, command not
	// found, pre-flight): the foreground command prints Detail as an error.
	Fatal               bool
	ConsecutiveFailures int
	TotalFailures       int
	Delay               time.Duration
	// Incomplete: the loop stops at a cap not complete (exit 4, "cap
	// reached, not complete" in Detail).
	Incomplete bool
}

// Backoff is the wait after the n-th consecutive failure: min(2^(n-1), 300) s.
func Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 10 { // 2^9 s is already past the cap; no shift overflow
		return maxBackoff
	}
	return min(time.Duration(1<<(n-1))*time.Second, maxBackoff)
}

// Decide is the loop's pure decision after an iteration, in the order of
// docs/completion.md: accepted completion, blocked/decide, fatal setup
// errors, wait-without-restart, the iteration cap, the time budget,
// failures with backoff, a quiet agent continued in its session
// (--same-session), else the next iteration after the restart delay.
func Decide(o Outcome, s Snapshot) Decision {
	d := Decision{ConsecutiveFailures: s.ConsecutiveFailures, TotalFailures: s.TotalFailures, Delay: s.RestartDelay}
	if end, ok := decideHalt(o, d); ok {
		return end
	}
	if end, ok := decideSignal(o, d); ok {
		return end
	}
	if end, ok := decideSetup(o, d); ok {
		return end
	}
	return decideNext(o, s, d)
}

func stop(d Decision, status state.RalphStatus, reason state.ExitReason, detail string) Decision {
	d.Action, d.Status, d.Reason, d.Detail = Stop, status, reason, detail
	return d
}

// decideHalt: the loop was stopped from outside, or its prompt is gone.
func decideHalt(o Outcome, d Decision) (Decision, bool) {
	switch o.End {
	case EndStopped:
		return stop(d, state.RalphStopped, ReasonKilled, ""), true
	case EndInterrupted:
		return stop(d, state.RalphStopped, ReasonInterrupted, ""), true
	case EndPromptError:
		d.Fatal, d.Hint = true, o.Hint
		return stop(d, state.RalphFailed, ReasonFailed, o.Detail), true
	}
	return d, false
}

// decideSignal: an accepted completion (COMPLETE, done pattern, done
// file), BLOCKED or DECIDE ends the loop.
func decideSignal(o Outcome, d Decision) (Decision, bool) {
	if completion(o) && o.Rejected == "" {
		switch o.Signal.Kind {
		case SignalComplete:
			return stop(d, state.RalphStopped, ReasonComplete, ""), true
		case SignalDonePattern:
			return stop(d, state.RalphStopped, ReasonDonePattern, o.Signal.Detail), true
		}
		return stop(d, state.RalphStopped, ReasonDoneFile, ""), true
	}
	switch o.Signal.Kind {
	case SignalBlocked:
		return stop(d, state.RalphStopped, ReasonBlocked, o.Signal.Detail), true
	case SignalDecide:
		return stop(d, state.RalphStopped, ReasonDecide, o.Signal.Detail), true
	}
	return d, false
}

// decideSetup: problems a human must fix (a setup screen, a command that
// cannot run) stop the loop; the agent asking to wait pauses it.
func decideSetup(o Outcome, d Decision) (Decision, bool) {
	exited := o.End == EndExited && o.ExitKnown
	switch {
	case o.End == EndPreflight:
		d.Fatal, d.Hint = true, o.Hint
		return stop(d, state.RalphFailed, ReasonPreflight, o.Detail), true
	case o.FatalStart && (exited || o.End == EndAgentError):
		d.Failure, d.Fatal, d.Hint = true, true, o.Hint
		d.ConsecutiveFailures++
		d.TotalFailures++
		return stop(d, state.RalphFailed, ReasonFailed, o.Detail), true
	case exited && (o.ExitCode == exitcode.NotExecutable || o.ExitCode == exitcode.CommandNotFound):
		what := "not found"
		if o.ExitCode == exitcode.NotExecutable {
			what = "not executable"
		}
		if o.Detail != "" {
			what += ": " + o.Detail
		}
		d.Failure, d.Fatal, d.Hint = true, true, o.Hint
		d.ConsecutiveFailures++
		d.TotalFailures++
		return stop(d, state.RalphFailed, ReasonFailed, fmt.Sprintf("agent command %s (exit %d)", what, o.ExitCode)), true
	case exited && o.ExitCode == WaitExitCode:
		return wait(d, fmt.Sprintf("agent asked to wait (exit %d)", WaitExitCode)), true
	case o.WaitFile:
		return wait(d, "agent asked to wait (WAIT file)"), true
	}
	return d, false
}

func wait(d Decision, reason string) Decision {
	d.ConsecutiveFailures = 0
	d.Action, d.Status, d.Detail = Pause, state.RalphPaused, reason
	return d
}

// failed reports whether an iteration counts as a failure: the agent
// could not start, exited non-zero, ended its turn on an API error, lost
// its tmux server, or never showed it received the prompt.
func failed(o Outcome) bool {
	return o.End == EndStartFailed || o.End == EndAgentError || o.End == EndServerLost || o.Undelivered ||
		(o.End == EndExited && o.ExitKnown && o.ExitCode != 0)
}

// decideNext counts a failure, then: the cap, the time budget, too many
// failures, a backoff, a same-session continuation, or the next
// iteration.
func decideNext(o Outcome, s Snapshot, d Decision) Decision {
	failure := failed(o)
	if failure {
		d.Failure = true
		d.ConsecutiveFailures++
		d.TotalFailures++
	} else {
		d.ConsecutiveFailures = 0
	}
	if end, ok := DecideCap(o, s, d); ok {
		return end
	}
	switch {
	case failure && d.ConsecutiveFailures >= MaxFailures:
		return stop(d, state.RalphFailed, ReasonFailed, fmt.Sprintf("%d consecutive failures", d.ConsecutiveFailures))
	case failure:
		d.Delay = Backoff(d.ConsecutiveFailures)
	case (o.End == EndInactive || o.End == EndIdle) && s.SameSession && !s.Paused && o.Signal.Kind == SignalNone:
		d.Action, d.Delay = Continue, 0
		return d
	}
	d.Action = Next
	return d
}

// CapNotComplete begins the exit detail of a loop that reached its cap not
// complete; ralph wait and ralph status print it.
const CapNotComplete = "cap reached, not complete"

// DecideCap stops the loop at its iteration cap, its time budget, its
// cost or its token budget, if one is reached. The cap is a normal end
// (exit 0), unless the loop's last completion signal was rejected, in
// this iteration (o.Rejected) or an earlier one (s.LastRejection), or
// --fail-on-cap: then it is reached not complete (exit 4), and the detail
// says why. The engine also asks it before an iteration (after a resume
// at the cap, or a budget used up by the last one).
func DecideCap(o Outcome, s Snapshot, d Decision) (Decision, bool) {
	reason, ok := capReached(o, s)
	if !ok {
		return d, false
	}
	d = stop(d, state.RalphStopped, reason, "")
	switch {
	case o.Rejected != "":
		d.Incomplete, d.Detail = true, fmt.Sprintf("%s: the last completion was rejected (iteration %d: %s)", CapNotComplete, s.Iteration, o.Rejected)
	case s.LastRejection != "":
		d.Incomplete, d.Detail = true, fmt.Sprintf("%s: the last completion was rejected (%s)", CapNotComplete, s.LastRejection)
	case s.FailOnCap:
		d.Incomplete, d.Detail = true, CapNotComplete+" (--fail-on-cap)"
	}
	return d, true
}

// capReached names the cap or budget the loop has reached, in this order:
// iterations, time, cost, tokens. A budget counts what the agents
// reported: a cost nobody reported is never over.
func capReached(o Outcome, s Snapshot) (state.ExitReason, bool) {
	switch {
	case s.MaxIterations > 0 && s.Iteration >= s.MaxIterations:
		return ReasonMaxIterations, true
	case o.End == EndMaxTime || (s.MaxTime > 0 && s.Elapsed >= s.MaxTime):
		return ReasonMaxTime, true
	case o.End == EndMaxCost || (s.MaxCost > 0 && s.Usage.CostUSD != nil && *s.Usage.CostUSD >= s.MaxCost):
		return ReasonMaxCost, true
	case o.End == EndMaxTokens || (s.MaxTokens > 0 && s.Usage.Tokens() >= s.MaxTokens):
		return ReasonMaxTokens, true
	}
	return "", false
}
