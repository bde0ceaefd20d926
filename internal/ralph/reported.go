package ralph

import (
	"context"
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/agent"
	"github.com/swarmtools/swarm/internal/clock"
	"github.com/swarmtools/swarm/internal/state"
)

// TurnEnd is how the agent's events say its turn ended.
type TurnEnd int

const (
	TurnGoesOn  TurnEnd = iota // the turn goes on
	TurnStopped                // it finished its turn (Stop)
	TurnFailed                 // an API error ended it (StopFailure)
	TurnExited                 // the agent is exiting (SessionEnd)
)

// EventVerdict is what an agent's events since the last look say about
// its turn.
type EventVerdict struct {
	// Prompted: it took a prompt since (UserPromptSubmit).
	Prompted bool
	// Worked: it took the prompt or ran a tool.
	Worked bool
	// Dialog is a permission prompt or a question waiting for a human
	// (nil: none, or one answered since: a tool ran).
	Dialog *agent.Verdict
	// Asked is a permission the agent asked for (PermissionRequest) and
	// nothing since answered: a dialog only once it shows (its screen,
	// or its permission_prompt notification), for a hook of the user's
	// can allow it first, and the agent then goes on without one.
	Asked *agent.Verdict
	// End is how the turn ended, by Event.
	End   TurnEnd
	Event agent.Event
	// Errors are what swarm's hook could not record.
	Errors []string
	// Used is how many events the verdict read: those after an end are
	// the next turn's.
	Used int
}

// JudgeEvents reads an agent's events in order. It is pure. For an agent
// that reports its prompts (needPrompt), the events of a turn count only
// after its prompt was taken (prompted, or a UserPromptSubmit among
// them): a late Stop of the turn before is not this turn's end.
func JudgeEvents(evs []agent.Event, needPrompt, prompted bool) EventVerdict {
	v := EventVerdict{Prompted: prompted}
	for i, ev := range evs {
		v.Used = i + 1
		ours := v.Prompted || !needPrompt
		switch ev.Name {
		case agent.EventUserPromptSubmit:
			v.Prompted, v.Worked, v.Dialog, v.Asked = true, true, nil, nil
		case agent.EventPreToolUse:
			if ours {
				v.Worked, v.Dialog, v.Asked = true, nil, nil
			}
		case agent.EventPermissionRequest:
			if ours {
				v.Asked = eventDialog(ev)
			}
		case agent.EventNotification:
			if d := eventDialog(ev); d != nil && ours {
				v.Dialog = d
			}
		case agent.EventStop, agent.EventStopFailure:
			if ours {
				// A turn that ended waits at no dialog: a permission it
				// asked for was answered (a hook of the user's can).
				v.End, v.Event, v.Dialog, v.Asked = TurnStopped, ev, nil, nil
				if ev.Name == agent.EventStopFailure {
					v.End = TurnFailed
				}
				return v
			}
		case agent.EventSessionEnd:
			if ev.Kind != "clear" && ev.Kind != "resume" {
				v.End, v.Event, v.Dialog, v.Asked = TurnExited, ev, nil, nil
				return v
			}
		case agent.EventHookError:
			v.Errors = append(v.Errors, ev.Detail)
		}
	}
	return v
}

// eventDialog is the dialog an event says the agent waits at: a
// permission asked for a tool, a permission prompt or a question
// notified; nil for other notifications (idle for a minute, a login
// done).
func eventDialog(ev agent.Event) *agent.Verdict {
	switch {
	case ev.Name == agent.EventPermissionRequest:
		line := ev.Tool
		if ev.Detail != "" {
			line += ": " + ev.Detail
		}
		return &agent.Verdict{State: agent.Dialog, Kind: agent.StuckPermission, Line: line}
	case ev.Kind == "permission_prompt":
		return &agent.Verdict{State: agent.Dialog, Kind: agent.StuckPermission, Line: ev.Message}
	case ev.Kind == "elicitation_dialog":
		return &agent.Verdict{State: agent.Dialog, Kind: agent.StuckQuestion, Line: ev.Message}
	}
	return nil
}

// reported acts on the agent's events queued since the last poll: a
// dialog pauses the loop (onDialog), a finished turn ends the iteration
// at once (no idle grace), an API error ends it as the screen's would, an
// exit ends it as an exit. screen is this poll's, for a rate limit's
// reset time.
func (e *Engine) reported(ctx context.Context, t *turn, screen string) (Outcome, bool) {
	if t.rep == nil || len(t.queue) == 0 {
		return Outcome{}, false
	}
	v := JudgeEvents(t.queue, t.needPrompt(), t.prompted)
	t.queue = t.queue[v.Used:]
	t.prompted = v.Prompted
	for _, msg := range v.Errors {
		if !t.rep.warned {
			t.rep.warned = true
			e.log(EventWarn, "iteration %d: the agent's hook failed: %s", t.iter, msg)
		}
	}
	if v.Worked || v.End != TurnGoesOn {
		// Past what it asked or waited at, and past a Stop held back
		// (pendingStop): another Stop hook blocked it, it goes on.
		t.asked, t.pendingStop = nil, nil
	}
	if v.Worked {
		t.worked = true
		t.workingAt = e.Clock.Now()
		if !t.confirmed {
			e.confirm(t)
		}
		if v.Dialog == nil {
			t.dialog, t.dialogEvent = "", false // it works again: past its dialog
		}
	}
	if v.Asked != nil {
		t.asked, t.askedShown = v.Asked, time.Time{}
	}
	if v.Dialog != nil {
		d := *v.Dialog
		if t.asked != nil && d.Kind == agent.StuckPermission {
			d = *t.asked // the tool and what it would do name it better
		}
		if o, ok := e.onDialog(t, d); ok {
			return o, true
		}
		t.dialogEvent = true
	}
	switch v.End {
	case TurnStopped:
		if t.rep.stopHooks && v.Event.Name == agent.EventStop {
			// The user's own Stop hooks run beside swarm's, and one may
			// block the turn's end: the agent then goes on. The Stop
			// counts once the screen shows the turn over (judge), unless
			// the agent reports more first.
			ev := v.Event
			t.pendingStop, t.stopAt = &ev, eventTime(ev, e.Clock.Now())
			return Outcome{}, false
		}
		return e.stopped(t, v.Event), true
	case TurnFailed:
		return e.failedTurn(ctx, t, v.Event, screen)
	case TurnExited:
		return e.sessionEnded(t), true
	}
	return Outcome{}, false
}

// stopped: the agent reported its turn done. Its promise is judged in
// its final message, which the event carries, and nowhere else: its
// output also holds the prompt as it echoed it, which names the tag
// (Claude Code 2.1.332 shows a pasted prompt expanded, redrawn in pieces
// no echo check can read), and its earlier messages. A done pattern is
// still looked for in all of its output (final). An event without the
// message (a Claude Code whose Stop hook does not send
// last_assistant_message) leaves the promise to the screen, as without
// hooks: judged there, a tag the prompt holds counts once the rendered
// pane shows it as the agent's.
func (e *Engine) stopped(t *turn, ev agent.Event) Outcome {
	t.worked = true
	t.stopAt = eventTime(ev, e.Clock.Now())
	if ev.Message == "" {
		o := e.final(t, Outcome{End: EndIdle})
		o.Reported = true
		return o
	}
	o := e.final(t, Outcome{End: EndIdle, Reported: true})
	det := e.detector(t.st, t.prompt)
	det.Feed([]byte(ev.Message))
	det.Flush()
	if sig, ok := det.Stop(); ok && (o.Signal.Kind == SignalNone || sig.Kind < o.Signal.Kind) {
		o.Signal = sig
	}
	return o
}

// failedTurn: the agent reported an API error that ended its turn. A
// rate limit that is a usage limit (its screen or the reported message
// says so, with its reset) is waited out; an error no retry gets past
// (authentication, billing) stops the loop with its fix; any other fails
// the iteration (backoff).
func (e *Engine) failedTurn(ctx context.Context, t *turn, ev agent.Event, screen string) (Outcome, bool) {
	t.stopAt = eventTime(ev, e.Clock.Now())
	if ev.Kind == "rate_limit" {
		if v, ok := e.usageLimit(t, ev, screen); ok {
			return e.waitOutLimit(ctx, t, v)
		}
	}
	detail := ev.Message
	if detail == "" {
		detail = "API error: " + ev.Kind
	}
	e.log(EventWarn, "iteration %d: agent error: %s", t.iter, detail)
	o := Outcome{End: EndAgentError, Detail: detail, Reported: true}
	if fix, ok := t.profile.FatalError(ev.Kind); ok {
		o.FatalStart, o.Detail = true, "the agent answered: "+detail
		o.Hint = fmt.Sprintf("%s; then: swarm ralph resume %s", fix, e.Name)
	}
	return e.final(t, o), true
}

// usageLimit is the usage limit a reported rate limit is, if it is one:
// as the screen shows it, or as the agent's message says it. The hook
// runs before the agent draws the limit (Claude Code's "You've hit your
// session limit · resets 9:30pm"), so the poll's screen may not show it
// yet; a rate limit the message does not name as a usage limit (an
// API's 429) is not one.
func (e *Engine) usageLimit(t *turn, ev agent.Event, screen string) (agent.Verdict, bool) {
	if v := e.verdict(t, screen); v.Agent.State == agent.Limited {
		return v.Agent, true
	}
	for _, text := range []string{ev.Message, ev.Detail} {
		if text == "" {
			continue
		}
		if v := t.profile.Judge(text, e.Clock.Now(), t.limits...); v.State == agent.Limited {
			return v, true
		}
	}
	return agent.Verdict{}, false
}

// sessionEndWait bounds the wait, after the agent reported its session's
// end, for its exit status: it has its state to save first.
const sessionEndWait = 3 * time.Second

// sessionEnded: the agent reported it is exiting. The iteration ends as
// its exit, with the exit status if the wrapper records one in time.
func (e *Engine) sessionEnded(t *turn) Outcome {
	code, known := 0, false
	clock.Wait(context.Background(), e.Clock, exitStatusGap, sessionEndWait, func() bool {
		code, known = t.readExit()
		return known
	})
	if known {
		e.drain(t)
	}
	return e.final(t, Outcome{End: EndExited, ExitCode: code, ExitKnown: known, Reported: true})
}

// overSpent: the loop's --max-cost or --max-tokens is reached, the
// running turn's usage included (noteUsage keeps the state's total live).
func (e *Engine) overSpent(t *turn) (Outcome, bool) {
	st := e.lastState()
	if st == nil || t.rep == nil {
		return Outcome{}, false
	}
	switch {
	case st.MaxCost > 0 && st.CostUSD != nil && *st.CostUSD >= st.MaxCost:
		e.say("cost budget (%s) reached at %s; stopping the agent", FormatCost(st.MaxCost), FormatCost(*st.CostUSD))
		return e.final(t, Outcome{End: EndMaxCost}), true
	case st.MaxTokens > 0 && st.Tokens() >= st.MaxTokens:
		e.say("token budget (%d) reached at %d; stopping the agent", st.MaxTokens, st.Tokens())
		return e.final(t, Outcome{End: EndMaxTokens}), true
	}
	return Outcome{}, false
}

// settleUsage waits, after the agent reported its turn's end, until its
// status line has the turn's last reply in its cost, at most
// statusSettle, and reads its usage a last time.
func (e *Engine) settleUsage(t *turn) {
	r := t.rep
	if r == nil {
		return
	}
	if r.hasStatus && !t.stopAt.IsZero() {
		clock.Wait(context.Background(), e.Clock, statusCheck, statusSettle, func() bool {
			e.readReports(t)
			return r.status.Time.After(t.stopAt)
		})
	}
	e.readReports(t)
}

// eventTime is when the agent reported ev (the hook's clock, as the
// status line's), or now for an event without a time.
func eventTime(ev agent.Event, now time.Time) time.Time {
	if ev.Time.IsZero() {
		return now
	}
	return ev.Time
}

// routineLineRoom is more than a routine event's line takes (a tool's
// name and the event's time and session).
const routineLineRoom = 1 << 10

// dropsRoutine reports whether the agent's events file is so near its cap
// of routine events that one may have been refused (state.AppendEvent):
// a tool use after a dialog may then never be reported.
func (r *reporting) dropsRoutine() bool {
	return r != nil && r.size+routineLineRoom > state.MaxRoutineEvents
}

// eventsGrew reports whether the agent's events file grew since it was
// last read: the watch then polls at once. (Its size, not the read
// offset: a file that cannot be read must not make the watch spin.)
func (r *reporting) eventsGrew() bool {
	return r != nil && state.EventsSize(r.eventsFile) > r.size
}
